"""One module per `sandmle` subcommand: `add_arguments(parser)` and `run(args) -> int`. Thin: logic lives in the stages."""
