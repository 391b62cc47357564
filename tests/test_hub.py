"""The corpus as a Hub dataset: layout, card, materialisation, row validation and the push path (HTTP stubbed)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import huggingface_hub
import pytest
from datasets import load_dataset
from huggingface_hub import DatasetCard
from PIL import Image as PILImage

from _hub_helpers import fake_hub
from conftest import make_tabular_task
from sandmle import hub
from sandmle.cli import main as cli_main
from sandmle.task import Task, bundle_hash, write_bundle


REPO = "org/sandmle-tasks"


def make_image_task(out_dir: Path, scratch: Path, seed: int) -> Task:
    """A tabular fixture turned into an 'image' task with PNGs under public/images/ (exercises binary files)."""
    base = make_tabular_task(scratch / f"base-{seed}", n_train=30, n_test=15, seed=seed)
    public = base.public_files()
    for i in range(3):
        buf = io.BytesIO()
        PILImage.new("RGB", (8, 8), (40 * i, 10 * seed, 200)).save(buf, format="PNG")
        public[f"images/scan_{i:02d}.png"] = buf.getvalue()
    spec = base.spec.model_copy(update={"modality": "image", "scenario": "leaf-scan", "task_id": ""})
    private = {k: v for k, v in base.private_files().items() if k != "grade.py"}
    return write_bundle(spec, public, private, out_dir)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """3 train (2 tabular + 1 image) and 2 test (1 tabular + 1 image) tasks, each a different seed."""
    root, scratch = tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("scratch")
    for seed in (0, 1):
        make_tabular_task(root / "train", n_train=40, n_test=20, seed=seed)
    make_image_task(root / "train", scratch, seed=2)
    make_tabular_task(root / "test", n_train=40, n_test=20, seed=3)
    make_image_task(root / "test", scratch, seed=4)
    (root / "summary.json").write_text(json.dumps({"kept": 5, "rejected": 0}))
    return root


@pytest.fixture(scope="module")
def layout(corpus, tmp_path_factory) -> hub.HubLayout:
    out = tmp_path_factory.mktemp("published") / "sandmle-tasks"
    result = hub.publish(corpus, REPO, local_dir=out, push=False)
    assert not result.pushed
    return result.layout


def _ids(corpus: Path, split: str) -> list[str]:
    return sorted(p.name for p in (corpus / split).iterdir() if (p / "task.json").is_file())


def test_layout_loads_with_load_dataset(corpus, layout, tmp_path):
    ds = load_dataset(str(layout.root), cache_dir=str(tmp_path / "cache"))
    assert set(ds) == {"train", "test"}
    for split in ("train", "test"):
        assert sorted(ds[split]["task_id"]) == _ids(corpus, split)
        for row in ds[split]:
            task = Task.load(corpus / split / row["task_id"])
            assert row["spec_json"] == (task.root / "task.json").read_text(encoding="utf-8")
            assert (row["metric"], row["direction"]) == ("roc_auc", "maximize")
            assert (row["n_train"], row["n_test"], row["modality"]) == (
                task.spec.n_train_rows,
                task.spec.n_test_rows,
                task.spec.modality,
            )
            assert row["thresholds"] == {"gold": 0.9, "silver": 0.85, "bronze": 0.8, "median": 0.7}
            assert row["leaderboard"] == task.spec.grading.leaderboard
            assert {f["path"] for f in row["private_files"]} == {"answers.csv", "grade.py"}
            assert row["description"] == task.description
            assert task.spec.title in row["prompt"] and "submission.csv" in row["prompt"]
            if task.spec.modality == "image":
                assert row["preview"].size == (8, 8)  # decoded by datasets' Image feature for the viewer
            else:
                assert row["preview"] is None
    # Shards sit under their modality; the per-modality config sees only its tasks.
    assert sorted(p.relative_to(layout.root).as_posix() for p in layout.root.rglob("*.parquet")) == [
        "data/image/test-00000-of-00001.parquet",
        "data/image/train-00000-of-00001.parquet",
        "data/tabular/test-00000-of-00001.parquet",
        "data/tabular/train-00000-of-00001.parquet",
    ]
    images = load_dataset(str(layout.root), "image", split="train", cache_dir=str(tmp_path / "cache"))
    assert images["modality"] == ["image"]
    assert (layout.root / "summary.json").read_text() == (corpus / "summary.json").read_text()


def test_small_shards_split_a_split(corpus, tmp_path):
    layout = hub.write_hub_layout(corpus, tmp_path / "sharded", max_shard_bytes=1, prompt_builder=lambda t: "p")
    assert layout.shards["train"] == [
        "data/image/train-00000-of-00001.parquet",
        "data/tabular/train-00000-of-00002.parquet",
        "data/tabular/train-00001-of-00002.parquet",
    ]
    train = load_dataset(str(layout.root), split="train", cache_dir=str(tmp_path / "cache"))
    assert sorted(train["task_id"]) == _ids(corpus, "train")
    with pytest.raises(hub.HubError, match="must be positive"):
        hub.write_hub_layout(corpus, tmp_path / "x", max_shard_bytes=0)


def test_materialize_reproduces_bundles_and_grades(corpus, layout, tmp_path):
    ds = load_dataset(str(layout.root), cache_dir=str(tmp_path / "cache"))
    n = 0
    for split in ("train", "test"):
        for row in ds[split]:
            original = Task.load(corpus / split / row["task_id"])
            rebuilt = hub.materialize(row, tmp_path / "tasks")
            assert rebuilt.root == tmp_path / "tasks" / row["task_id"]
            assert bundle_hash(rebuilt.root) == bundle_hash(original.root) == row["bundle_hash"]
            sample = original.public_dir / "sample_submission.csv"
            perfect = original.answers_path.read_bytes()
            for submission in (sample.read_bytes(), perfect):
                want, got = original.grade(submission).to_dict(), rebuilt.grade(submission).to_dict()
                assert got == want and got["valid_submission"]
            assert rebuilt.grade(perfect).gold_medal
            # Idempotent: a second call reuses the identical folder.
            assert hub.materialize(row, tmp_path / "tasks").root == rebuilt.root
            n += 1
    assert n == 5


def test_card_yaml_parses_and_matches_files(layout):
    card = DatasetCard.load(layout.card_path)
    data = card.data
    assert data.license == "apache-2.0"
    assert data.pretty_name
    assert data.size_categories == ["n<1K"]
    assert {"tabular-classification", "image-classification", "reinforcement-learning"} <= set(data.task_categories)
    assert "synthetic" in data.tags
    configs = {c["config_name"]: c for c in data.configs}
    assert set(configs) == {"default", "tabular", "image"} and configs["default"]["default"] is True
    written = {p.relative_to(layout.root).as_posix() for p in layout.root.rglob("*.parquet")}
    for name, config in configs.items():
        matched: set[str] = set()
        for entry in config["data_files"]:
            files = {p.relative_to(layout.root).as_posix() for p in layout.root.glob(entry["path"])}
            assert files, f"config {name} split {entry['split']} matches no file"
            assert all(Path(f).name.startswith(f"{entry['split']}-") for f in files)
            matched |= files
        assert matched == (written if name == "default" else {f for f in written if f.startswith(f"data/{name}/")})
    assert hub.read_card_configs(layout.root) == data.configs
    body = card.text
    assert "${" not in body and "2604.04872" in body
    assert "| `tabular` | 2 | 1 | 3 |" in body and "| `image` | 1 | 1 | 2 |" in body
    assert f'load_dataset("{REPO}"' in body


def test_card_template_is_valid_on_its_own(tmp_path):
    card = DatasetCard(hub.load_card_template())
    assert card.data.license == "apache-2.0" and card.data.configs[0]["config_name"] == "default"
    repo_root = Path(__file__).resolve().parents[1]
    assert hub.load_card_template() == (repo_root / "dataset_cards" / "sandmle-tasks.md").read_text()
    with pytest.raises(hub.HubError, match="placeholder"):
        make_tabular_task(tmp_path / "train", n_train=20, n_test=10)
        stats = hub.CorpusStats.from_splits(hub.corpus_splits(tmp_path))
        hub.render_card(stats, [], repo_id=REPO, template="---\nlicense: mit\n---\n${not_a_field}\n")


def test_push_path_with_only_http_stubbed(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    with fake_hub() as fake:
        # A stale shard from an earlier publish must be deleted by the new commit.
        hub.push_layout(_stale_layout(tmp_path), REPO, token="hf_test", private=True)
        fake.calls.clear()
        result = hub.publish(corpus, REPO, private=True, token="hf_test", local_dir=tmp_path / "layout")
        assert result.pushed and result.repo_url == f"https://huggingface.co/datasets/{REPO}"
        assert result.commit_url.startswith(f"https://huggingface.co/datasets/{REPO}/commit/")
        posted = fake.paths("POST")
        assert posted == [
            "/api/repos/create",
            "/api/validate-yaml",
            f"/api/datasets/{REPO}/preupload/main",
            f"/api/datasets/{REPO}/commit/main",
        ]
        create = json.loads(fake.calls[0].body)
        assert (create["name"], create["organization"], create["type"], create["visibility"]) == (
            "sandmle-tasks",
            "org",
            "dataset",
            "private",
        )
        assert fake.calls[0].headers["authorization"] == "Bearer hf_test"
        assert fake.repos[("dataset", REPO)].private  # created private by the first push; 409 handled (exist_ok)
        remote = fake.files("dataset", REPO)
        local = {
            p.relative_to(result.layout.root).as_posix(): p.read_bytes()
            for p in result.layout.root.rglob("*")
            if p.is_file()
        }
        assert {k: v for k, v in remote.items() if k != ".gitattributes"} == local
        commit = fake.repos[("dataset", REPO)].commits[-1]
        assert ("deletedFile", "data/old/train-00000-of-00001.parquet") in commit["ops"]
        assert commit["summary"] == "Publish SandMLE corpus (3 train, 2 test tasks)"

        # Users load it back by repo id (resolution, tree listing and downloads through the same stub).
        rows = hub.load_corpus(REPO, "test", token="hf_test", cache_dir=tmp_path / "ds-cache")
        assert sorted(rows["task_id"]) == _ids(corpus, "test")
        for row in rows:
            rebuilt = hub.materialize(row, tmp_path / "from-hub")
            assert bundle_hash(rebuilt.root) == bundle_hash(corpus / "test" / row["task_id"])


def _stale_layout(tmp_path: Path) -> Path:
    stale = tmp_path / "stale"
    (stale / "data" / "old").mkdir(parents=True)
    (stale / "data" / "old" / "train-00000-of-00001.parquet").write_bytes(b"PAR1 stale")
    (stale / "README.md").write_text("---\nlicense: apache-2.0\n---\nold\n")
    return stale


def test_rows_missing_required_keys_are_refused(corpus):
    task = Task.load(next((corpus / "train").iterdir()))
    row = hub.task_to_row(task, prompt_builder=lambda t: "solve it")
    hub.validate_row(row)
    for key in ("spec_json", "private_files", "metric"):
        bad = dict(row)
        del bad[key]
        with pytest.raises(hub.HubError, match=rf"task '{task.task_id}': missing required key\(s\) '{key}'"):
            hub.validate_row(bad)
    with pytest.raises(hub.HubError, match=rf"task '{task.task_id}': required key 'prompt' is null"):
        hub.validate_row({**row, "prompt": None})
    with pytest.raises(hub.HubError, match="field 'n_train' expects an integer"):
        hub.validate_row({**row, "n_train": "40"})
    with pytest.raises(hub.HubError, match=r"field 'public_files\[0\].bytes' expects bytes"):
        hub.validate_row({**row, "public_files": [{"path": "a.csv", "bytes": "text"}]})
    with pytest.raises(hub.HubError, match="unknown key"):
        hub.validate_row({**row, "extra": 1})
    with pytest.raises(hub.HubError, match="row without a task_id: missing"):
        hub.validate_row({})
    hub.validate_row({**row, "thresholds": None, "preview": None})  # nullable columns


def test_publish_refuses_bad_rows_before_writing(corpus, tmp_path):
    out = tmp_path / "layout"
    with pytest.raises(hub.HubError, match="required key 'prompt' is null"):
        hub.write_hub_layout(corpus, out, prompt_builder=lambda t: None)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".layout")]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../escape.csv", "unsafe"),
        ("/etc/passwd", "unsafe"),
        ("a/../../b", "unsafe"),
        ("a\\b", "unsafe"),
        ("", "unsafe"),
    ],
)
def test_materialize_refuses_unsafe_paths(corpus, tmp_path, path, why):
    task = Task.load(next((corpus / "train").iterdir()))
    row = hub.task_to_row(task, prompt_builder=lambda t: "p")
    row["public_files"] = [*row["public_files"], {"path": path, "bytes": b"x"}]
    with pytest.raises(hub.HubError, match=why):
        hub.materialize(row, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape.csv").exists()


def test_materialize_refuses_tampered_rows(corpus, tmp_path):
    task = Task.load(next((corpus / "train").iterdir()))
    row = hub.task_to_row(task, prompt_builder=lambda t: "p")
    tampered = {**row, "private_files": [{"path": "answers.csv", "bytes": b"id,blight\n"}, *row["private_files"][1:]]}
    with pytest.raises(hub.HubError, match="does not match the row"):
        hub.materialize(tampered, tmp_path)
    assert not (tmp_path / task.task_id).exists()
    with pytest.raises(hub.HubError, match="lowercase slug"):
        hub.materialize({**row, "task_id": "../x"}, tmp_path)
    with pytest.raises(hub.HubError, match="spec_json describes task"):
        hub.materialize({**row, "task_id": "other-task"}, tmp_path)
    with pytest.raises(hub.HubError, match="missing required key 'spec_json'"):
        hub.materialize({k: v for k, v in row.items() if k != "spec_json"}, tmp_path)
    rebuilt = hub.materialize(row, tmp_path)
    (rebuilt.public_dir / "train.csv").write_text("changed")
    with pytest.raises(hub.HubError, match="exists with different content"):
        hub.materialize(row, tmp_path)
    assert bundle_hash(hub.materialize(row, tmp_path, overwrite=True).root) == row["bundle_hash"]


def test_corpus_errors_are_clear(corpus, tmp_path):
    with pytest.raises(hub.HubError, match="no task bundles"):
        hub.corpus_splits(tmp_path)
    leak = tmp_path / "leak"
    make_tabular_task(leak / "train", n_train=20, n_test=10, seed=7)
    make_tabular_task(leak / "test", n_train=20, n_test=10, seed=7)
    with pytest.raises(hub.HubError, match="appears in both 'train' and 'test'"):
        hub.corpus_splits(leak)
    extra = tmp_path / "extra"
    task = make_tabular_task(extra / "train", n_train=20, n_test=10, seed=8)
    (task.root / "ladder.log").write_text("log")
    with pytest.raises(hub.HubError, match="would not survive publishing: ladder.log"):
        hub.write_hub_layout(extra, tmp_path / "out")
    broken = tmp_path / "broken"
    task = make_tabular_task(broken / "train", n_train=20, n_test=10, seed=9)
    (task.public_dir / "test.csv").unlink()
    with pytest.raises(hub.HubError, match="split 'train': .*missing public/test.csv"):
        hub.corpus_splits(broken)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(hub.HubError, match="not a SandMLE Hub layout"):
        hub.write_hub_layout(corpus, foreign)
    assert (foreign / "notes.txt").read_text() == "mine"
    with pytest.raises(hub.HubError, match="org/name"):
        hub.publish(corpus, "not-a-repo-id", local_dir=tmp_path / "x", push=False)
    with pytest.raises(hub.HubError, match="nothing to do"):
        hub.publish(corpus, REPO, push=False)


def test_load_corpus_from_folders(corpus, layout, tmp_path):
    assert sorted(hub.load_corpus(corpus, "train")["task_id"]) == _ids(corpus, "train")
    assert sorted(hub.load_corpus(layout.root, "test", cache_dir=tmp_path)["task_id"]) == _ids(corpus, "test")
    with pytest.raises(hub.HubError, match="no split 'validation'"):
        hub.load_corpus(corpus, "validation")
    with pytest.raises(hub.HubError, match="neither a local folder nor a Hub dataset repo id"):
        hub.load_corpus(tmp_path / "missing" / "x" / "y", "train")


def test_cli_publish_no_push_is_deterministic(corpus, layout, tmp_path, capsys):
    out = tmp_path / "cli-layout"
    assert cli_main(["publish", str(corpus), "--repo-id", REPO, "--local-dir", str(out), "--no-push"]) == 0
    printed = capsys.readouterr().out
    assert "tasks: 3 train, 2 test" in printed and "configs: default, image, tabular" in printed
    # Same corpus, same bytes: re-publishing an unchanged corpus changes nothing on the Hub.
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(layout.root) for p in layout.root.rglob("*") if p.is_file())
    assert all((out / f).read_bytes() == (layout.root / f).read_bytes() for f in files)
    # Publishing again over a previous layout replaces it.
    assert cli_main(["publish", str(corpus), "--repo-id", REPO, "--local-dir", str(out), "--no-push"]) == 0
    assert cli_main(["publish", str(corpus), "--repo-id", "bad", "--local-dir", str(out), "--no-push"]) == 1
    assert "must look like 'org/name'" in capsys.readouterr().err


def test_cli_publish_push_reports_hub_errors(corpus, tmp_path, capsys):
    with fake_hub() as fake:
        fake.fail["/commit/"] = 403
        assert cli_main(["publish", str(corpus), "--repo-id", REPO, "--token", "hf_test"]) == 1
        assert "the Hub refused the upload" in capsys.readouterr().err
        fake.fail.clear()
        assert cli_main(["publish", str(corpus), "--repo-id", REPO, "--token", "hf_test", "--private"]) == 0
        assert f"pushed: https://huggingface.co/datasets/{REPO}" in capsys.readouterr().out
    assert sorted(fake.files("dataset", REPO)) == [
        ".gitattributes",
        "README.md",
        "data/image/test-00000-of-00001.parquet",
        "data/image/train-00000-of-00001.parquet",
        "data/tabular/test-00000-of-00001.parquet",
        "data/tabular/train-00000-of-00001.parquet",
        "summary.json",
    ]
