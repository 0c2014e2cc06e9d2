"""The repository's own layout rules, checked on its sources (docs/architecture.md)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _circles_module():
    spec = importlib.util.spec_from_file_location("import_circles", ROOT / "scripts/dev/import_circles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _crate(tmp, files):
    for rel, text in files.items():
        p = tmp / "crates/demo/src" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp / "crates"


def test_no_import_circles_between_the_modules_of_a_crate():
    mod = _circles_module()
    found = mod.circles(mod.graph_of(ROOT / "crates"))
    assert found == [], found


def test_the_circle_finder_finds_circles_and_only_circles(tmp_path):
    mod = _circles_module()
    crates = _crate(
        tmp_path,
        {
            "lib.rs": "mod a;\nmod b;\nmod c;\nmod d;\npub use a::f;\n",
            # a -> b -> c -> a is a circle; d -> a alone is not
            "a.rs": "use super::b::g;\npub fn f() {}\n",
            "b.rs": "pub fn g() { crate::c::h() }\n",
            "c.rs": "pub fn h() { super::a::f() }\n",
            # a reference in a comment or a unit test is not an import
            "d.rs": "use crate::a::f;\n// super::d::x\n#[cfg(test)]\nmod tests { use crate::d; }\n",
        },
    )
    found = mod.circles(mod.graph_of(crates))
    assert [sorted("/".join(m) for _, m in comp) for comp in found] == [["a", "b", "c"]]
    # the folder's mod.rs naming its own files is not a circle
    crates = _crate(
        tmp_path / "two",
        {"lib.rs": "mod x;\n", "x/mod.rs": "mod y;\npub use y::z;\n", "x/y.rs": "pub fn z() { super::w() }\n"},
    )
    assert mod.circles(mod.graph_of(crates)) == []
