"""A tiny Qwen3 causal LM and tokenizer built entirely locally, for CPU tests and GPU-less smoke runs.

Nothing is downloaded. The tokenizer is a byte-level BPE (exact decode round trip, like Qwen's) trained on a small
corpus: the SandMLE package sources, the chat/tool-call scaffolding and whatever texts the caller adds (task prompts,
scripted-agent trajectories). It carries Qwen3's special tokens and the Qwen3 chat template that ships inside TRL,
byte for byte, so TRL recognises it: ``add_response_schema`` attaches the Qwen3 tool-call parser
(``<tool_call>{json}</tool_call>``) and ``get_training_chat_template`` swaps in the prefix-preserving, generation-tagged
training template for GRPO's tool loop and SFT's assistant-only loss.

The model is a randomly initialised ``Qwen3ForCausalLM`` with a few layers and a hidden size of ~64, saved with
``save_pretrained`` so ``from_pretrained(path)`` works in GRPO, SFT and plain transformers.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


logger = logging.getLogger(__name__)

# Qwen3's vocabulary conventions: control tokens are "special" (dropped by skip_special_tokens); the tool / thinking
# markers are plain added tokens so they survive decoding and the response parser sees them.
ENDOFTEXT = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
CONTROL_TOKENS = (ENDOFTEXT, IM_START, IM_END)
MARKUP_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>")

# A few conversations in the exact shape GRPO/SFT render, so the BPE learns the scaffolding as few tokens.
_SCAFFOLD_SNIPPETS = (
    '<tool_call>\n{"name": "execute_python", "arguments": {"code": "import pandas as pd\\nprint(1)"}}\n</tool_call>',
    '<tool_call>\n{"name": "validate_submission", "arguments": {}}\n</tool_call>',
    "<tool_response>\nOK\n</tool_response>",
    "<think>\n\n</think>\n\n",
    '{"type": "function", "function": {"name": "execute_python", "description": "Run Python code.", '
    '"parameters": {"type": "object", "properties": {"code": {"type": "string", "description": "code"}}, '
    '"required": ["code"]}, "return": {"type": "string"}}}',
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>",
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> "
    'XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>',
)


@dataclass(frozen=True)
class TinyQwen3Config:
    """Shape of the tiny model. Defaults give ~0.2-0.4 M parameters: fast on 2 CPU cores, still a real Qwen3."""

    vocab_size: int = 4096
    corpus_weight: int = 16
    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int = 16
    max_position_embeddings: int = 8192
    seed: int = 0


def qwen3_chat_template() -> str:
    """The Qwen3 chat template exactly as TRL ships it (identity comparison in TRL depends on every byte)."""
    from trl.chat_template_utils import qwen3_chat_template as template

    return template


def default_corpus() -> Iterator[str]:
    """The in-repo corpus: chat/tool scaffolding, the chat template and the SandMLE package's Python sources."""
    yield from _SCAFFOLD_SNIPPETS
    yield qwen3_chat_template()
    package_root = Path(__file__).resolve().parents[1]
    for path in sorted(package_root.rglob("*.py")):
        yield path.read_text(encoding="utf-8", errors="replace")


def build_tiny_tokenizer(corpus: Iterable[str] = (), vocab_size: int = 4096, corpus_weight: int = 16):
    """Train a byte-level BPE on ``default_corpus()`` plus ``corpus`` and wrap it as a Qwen3-style fast tokenizer.

    ``corpus`` counts ``corpus_weight`` times, so the texts the model will actually see (task prompts, rendered
    trajectories) get the merges and tokenize into few tokens; everything else still round-trips through bytes.

    Returns a ``PreTrainedTokenizerFast`` with Qwen3's special tokens (eos ``<|im_end|>``, pad ``<|endoftext|>``, no
    bos), left padding and TRL's Qwen3 chat template.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import AddedToken, PreTrainedTokenizerFast

    n_special = len(CONTROL_TOKENS) + len(MARKUP_TOKENS)
    if vocab_size < 256 + n_special + 1:
        raise ValueError(
            f"vocab_size must be at least {256 + n_special + 1} (bytes + special tokens), got {vocab_size}"
        )
    bpe = Tokenizer(models.BPE())
    # Pieces are whole lines (not words), so merges may span words: text repeated across the corpus (the tool
    # schemas, the prompt scaffolding, a tool call) becomes a handful of tokens and CPU sequences stay short.
    bpe.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split("\n", behavior="merged_with_previous"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - n_special,
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    if corpus_weight < 1:
        raise ValueError(f"corpus_weight must be >= 1, got {corpus_weight}")
    texts = [*default_corpus(), *(list(corpus) * corpus_weight)]
    bpe.train_from_iterator(texts, trainer=trainer, length=len(texts))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token=AddedToken(IM_END, special=True, normalized=False),
        pad_token=AddedToken(ENDOFTEXT, special=True, normalized=False),
        additional_special_tokens=[AddedToken(IM_START, special=True, normalized=False)],
        padding_side="left",
        clean_up_tokenization_spaces=False,
        model_max_length=TinyQwen3Config.max_position_embeddings,
    )
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    tokenizer.chat_template = qwen3_chat_template()
    logger.info("built a byte-level BPE tokenizer with %d tokens from %d texts", len(tokenizer), len(texts))
    return tokenizer


def build_tiny_qwen3(
    out_dir: Path | str,
    corpus: Iterable[str] = (),
    config: TinyQwen3Config | None = None,
) -> Path:
    """Build and save a tiny random ``Qwen3ForCausalLM`` + tokenizer under ``out_dir``; returns ``out_dir``.

    ``corpus`` adds texts to the tokenizer's training corpus (task prompts, trajectories) so they tokenize compactly.
    The result loads with ``AutoModelForCausalLM.from_pretrained(out_dir)`` / ``AutoTokenizer.from_pretrained(out_dir)``.
    """
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    cfg = config or TinyQwen3Config()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tiny_tokenizer(corpus, vocab_size=cfg.vocab_size, corpus_weight=cfg.corpus_weight)
    eos_id = tokenizer.convert_tokens_to_ids(IM_END)
    pad_id = tokenizer.convert_tokens_to_ids(ENDOFTEXT)
    model_config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        num_hidden_layers=cfg.num_hidden_layers,
        num_attention_heads=cfg.num_attention_heads,
        num_key_value_heads=cfg.num_key_value_heads,
        head_dim=cfg.head_dim,
        max_position_embeddings=cfg.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
    )
    torch.manual_seed(cfg.seed)
    model = Qwen3ForCausalLM(model_config)
    model.generation_config = GenerationConfig(eos_token_id=[eos_id, pad_id], pad_token_id=pad_id, do_sample=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "tiny_qwen3.json").write_text(json.dumps(cfg.__dict__, indent=2) + "\n", encoding="utf-8")
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("saved a tiny Qwen3 (%d parameters, vocab %d) to %s", n_params, len(tokenizer), out)
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m sandmle.train.tiny --out DIR [--corpus FILE ...]``: build and save the tiny model."""
    import argparse

    parser = argparse.ArgumentParser(description="Build a tiny random Qwen3 + tokenizer locally (no downloads).")
    parser.add_argument("--out", type=Path, required=True, help="output folder (from_pretrained-compatible)")
    parser.add_argument("--corpus", type=Path, nargs="*", default=[], help="text files the tokenizer should favour")
    parser.add_argument("--vocab-size", type=int, default=TinyQwen3Config.vocab_size)
    parser.add_argument("--layers", type=int, default=TinyQwen3Config.num_hidden_layers)
    parser.add_argument("--hidden-size", type=int, default=TinyQwen3Config.hidden_size)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    texts = [p.read_text(encoding="utf-8") for p in args.corpus]
    config = TinyQwen3Config(
        vocab_size=args.vocab_size,
        num_hidden_layers=args.layers,
        hidden_size=args.hidden_size,
        intermediate_size=2 * args.hidden_size,
    )
    build_tiny_qwen3(args.out, corpus=texts, config=config)


if __name__ == "__main__":
    main()
