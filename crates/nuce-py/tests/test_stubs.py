"""The type stubs (nuce/_nuce.pyi) name what the extension module has."""
import ast
import pathlib

import nuce
from nuce import _nuce  # noqa: F401  (the extension itself)
import importlib

STUB = pathlib.Path(nuce.__file__).with_name("_nuce.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign)) and hasattr(n, "name")
            } | {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
    return out


def test_stubs_match_the_module():
    ext = importlib.import_module("nuce._nuce")
    stubs = stub_names()
    public = {n for n in dir(ext) if not n.startswith("_")}
    assert public == set(stubs), public ^ set(stubs)
    for name, members in stubs.items():
        if not members:
            continue
        cls = getattr(ext, name)
        have = {n for n in dir(cls) if not n.startswith("_")}
        want = {m for m in members if not m.startswith("_")}
        assert have == want, (name, have ^ want)
