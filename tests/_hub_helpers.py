"""An in-memory Hugging Face Hub behind huggingface_hub's own HTTP client (httpx2 ``MockTransport``).

Only the HTTP layer is replaced: `HfApi`, `upload_folder`, `create_branch` and `datasets.load_dataset` run their
real code and send real requests, which this fake answers like the Hub's REST API (repo creation, YAML validation,
preupload, NDJSON commits, branches, tree listing, revision info, file resolution). Every request is recorded.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import unquote

import httpx2
import huggingface_hub
from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook


ENDPOINT = "https://huggingface.co"
_API_REPO = re.compile(
    r"^/api/(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"
    r"(?:/(?P<op>preupload|commit|tree|branch|paths-info|revision|refs)(?:/(?P<rest>.*))?)?$"
)
_RESOLVE = re.compile(r"^/(?:(?P<type>datasets|spaces)/)?(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


@dataclass
class FakeRepo:
    repo_type: str
    private: bool
    branches: dict[str, dict[str, bytes]] = field(default_factory=lambda: {"main": {".gitattributes": b"*.bin lfs\n"}})
    heads: dict[str, str] = field(default_factory=lambda: {"main": "0" * 40})
    commits: list[dict] = field(default_factory=list)
    snapshots: dict[str, dict[str, bytes]] = field(default_factory=dict)  # commit oid -> files

    def at(self, rev: str) -> tuple[str, dict[str, bytes]] | None:
        """(commit oid, files) at a branch name or a commit oid."""
        if rev in self.branches:
            return self.heads[rev], self.branches[rev]
        if rev in self.snapshots:
            return rev, self.snapshots[rev]
        return None


@dataclass
class Call:
    method: str
    path: str
    params: dict[str, str]
    body: bytes
    headers: dict[str, str]


@dataclass
class FakeHub:
    repos: dict[tuple[str, str], FakeRepo] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    fail: dict[str, int] = field(default_factory=dict)  # path substring -> HTTP status to answer (error injection)

    # -- helpers for assertions -----------------------------------------------------------------------------------
    def paths(self, method: str | None = None) -> list[str]:
        return [c.path for c in self.calls if method is None or c.method == method]

    def files(self, repo_type: str, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        return self.repos[(repo_type, repo_id)].branches[revision]

    # -- transport ------------------------------------------------------------------------------------------------
    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        path = unquote(request.url.path)
        self.calls.append(Call(request.method, path, dict(request.url.params), body, dict(request.headers)))
        for needle, status in self.fail.items():
            if needle in path:
                return httpx2.Response(status, json={"error": f"fake hub: injected {status} for {path}"})
        if path == "/api/repos/create" and request.method == "POST":
            return self._create_repo(json.loads(body))
        if path == "/api/validate-yaml" and request.method == "POST":
            return httpx2.Response(200, json={})
        if m := _API_REPO.match(path):
            repo_type = m["type"][:-1]
            repo = self.repos.get((repo_type, m["repo"]))
            if repo is None:
                return httpx2.Response(404, headers={"X-Error-Code": "RepoNotFound"}, json={"error": "not found"})
            return self._repo_api(request.method, repo, m["repo"], m["op"], m["rest"] or "", body, request)
        if m := _RESOLVE.match(path):
            repo_type = (m["type"] or "models")[:-1]
            repo = self.repos.get((repo_type, m["repo"]))
            found = repo.at(m["rev"]) if repo else None
            if found is None or m["path"] not in found[1]:
                return httpx2.Response(404, headers={"X-Error-Code": "EntryNotFound"}, json={"error": "no entry"})
            data = found[1][m["path"]]
            headers = {
                "X-Repo-Commit": found[0],
                "ETag": f'"{hashlib.sha1(data).hexdigest()}"',
                "Content-Length": str(len(data)),
            }
            return httpx2.Response(200, headers=headers, content=b"" if request.method == "HEAD" else data)
        return httpx2.Response(404, json={"error": f"fake hub: no route for {request.method} {path}"})

    def _create_repo(self, payload: dict) -> httpx2.Response:
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        url = f"{ENDPOINT}/{prefix}{repo_id}"
        if (repo_type, repo_id) in self.repos:
            return httpx2.Response(409, json={"error": "You already created this repo", "url": url})
        self.repos[(repo_type, repo_id)] = FakeRepo(
            repo_type=repo_type, private=payload.get("visibility") == "private"
        )
        return httpx2.Response(200, json={"url": url, "name": repo_id, "id": hashlib.sha1(url.encode()).hexdigest()})

    def _repo_api(self, method, repo: FakeRepo, repo_id, op, rest, body, request) -> httpx2.Response:
        if op == "preupload":
            files = json.loads(body)["files"]
            modes = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None} for f in files]
            return httpx2.Response(200, json={"files": modes, "commitOid": repo.heads.get(rest, "0" * 40)})
        if op == "commit":
            return self._commit(repo, repo_id, rest, body)
        if op == "branch" and method == "POST":
            if rest in repo.branches:
                return httpx2.Response(409, json={"error": "Reference already exists"})
            start = (json.loads(body) if body else {}).get("startingPoint") or "main"
            repo.branches[rest] = dict(repo.branches[start])
            repo.heads[rest] = repo.heads[start]
            return httpx2.Response(200, json={})
        if op == "tree" and method == "GET":
            rev, _, sub = rest.partition("/")
            found = repo.at(rev)
            if found is None:
                return httpx2.Response(404, headers={"X-Error-Code": "RevisionNotFound"}, json={"error": "no rev"})
            recursive = request.url.params.get("recursive") == "true"
            return httpx2.Response(200, json=_tree(found[1], sub.strip("/"), recursive))
        if op == "paths-info" and method == "POST":
            files = (repo.at(rest) or ("", {}))[1]
            wanted = request.url.params.get_list("paths") or _form_paths(body)
            entries = [
                {"type": "file", "path": p, "size": len(files[p]), "oid": hashlib.sha1(files[p]).hexdigest()}
                for p in wanted
                if p in files
            ]
            return httpx2.Response(200, json=entries)
        if op == "revision" or op is None:
            found = repo.at(rest or "main")
            if found is None:
                return httpx2.Response(404, headers={"X-Error-Code": "RevisionNotFound"}, json={"error": "no rev"})
            sha, files = found
            info = {
                "id": repo_id,
                "sha": sha,
                "private": repo.private,
                "siblings": [{"rfilename": p, "size": len(d)} for p, d in sorted(files.items())],
                "lastModified": "2026-01-01T00:00:00.000Z",
                "tags": [],
                "downloads": 0,
                "likes": 0,
            }
            return httpx2.Response(200, json=info)
        return httpx2.Response(404, json={"error": f"fake hub: no route for {method} {op}"})

    def _commit(self, repo: FakeRepo, repo_id: str, revision: str, body: bytes) -> httpx2.Response:
        if revision not in repo.branches:
            return httpx2.Response(404, headers={"X-Error-Code": "RevisionNotFound"}, json={"error": "no branch"})
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        header = next(item["value"] for item in lines if item["key"] == "header")
        files = repo.branches[revision]
        ops = []
        for item in lines:
            key, value = item["key"], item["value"]
            if key == "file":
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                files.pop(value["path"], None)
            elif key == "deletedFolder":
                for p in [p for p in files if p.startswith(value["path"].rstrip("/") + "/")]:
                    del files[p]
            elif key == "lfsFile":
                raise AssertionError("fake hub answers preupload with 'regular'; no LFS pointer expected")
            ops.append((key, value.get("path")))
        oid = hashlib.sha1(body).hexdigest()
        repo.heads[revision] = oid
        repo.snapshots[oid] = dict(files)
        repo.commits.append({"revision": revision, "summary": header["summary"], "ops": ops})
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        return httpx2.Response(
            200,
            json={"commitUrl": f"{ENDPOINT}/{prefix}{repo_id}/commit/{oid}", "commitOid": oid, "pullRequestUrl": None},
        )


def _tree(files: dict[str, bytes], sub: str, recursive: bool) -> list[dict]:
    """Hub tree entries under ``sub``: files and (implicit) directories, immediate children unless recursive."""
    prefix = f"{sub}/" if sub else ""
    entries: dict[str, dict] = {}
    for path, data in sorted(files.items()):
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) :].split("/")
        for depth in range(1, len(parts)):
            if depth > 1 and not recursive:
                break
            d = prefix + "/".join(parts[:depth])
            entries.setdefault(d, {"type": "directory", "path": d, "oid": hashlib.sha1(d.encode()).hexdigest()})
        if len(parts) == 1 or recursive:
            entries[path] = {"type": "file", "path": path, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
    return list(entries.values())


def _form_paths(body: bytes) -> list[str]:
    if not body:
        return []
    try:
        return list(json.loads(body).get("paths", []))
    except json.JSONDecodeError:
        from urllib.parse import parse_qs

        return parse_qs(body.decode()).get("paths", [])


@contextmanager
def fake_hub() -> Iterator[FakeHub]:
    """Route every huggingface_hub HTTP request to a fresh `FakeHub` (and restore the real client afterwards)."""
    hub = FakeHub()

    def factory() -> httpx2.Client:
        return httpx2.Client(
            transport=httpx2.MockTransport(hub),
            event_hooks={"request": [hf_request_event_hook]},
            follow_redirects=True,
        )

    huggingface_hub.set_client_factory(factory)
    try:
        yield hub
    finally:
        huggingface_hub.set_client_factory(default_client_factory)
