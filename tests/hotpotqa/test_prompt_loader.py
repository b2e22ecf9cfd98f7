"""The generic prompt-pack loader (shared by HotpotQA and ALFWorld)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reflexion_bench.prompts import PromptError, fill, load_pack, load_prompts


def test_directory_pack_names_files_by_relative_path(tmp_path: Path) -> None:
    (tmp_path / "react").mkdir()
    (tmp_path / "react" / "put_0.txt").write_text("demo put", encoding="utf-8")
    (tmp_path / "system.md").write_text("You answer {question}.", encoding="utf-8")
    (tmp_path / "README.md").write_text("not a template", encoding="utf-8")
    (tmp_path / "_draft.txt").write_text("skipped", encoding="utf-8")
    (tmp_path / "notes.csv").write_text("skipped", encoding="utf-8")
    pack = load_pack(tmp_path)
    assert sorted(pack) == ["react/put_0", "system"]
    assert pack.render("system", question="why") == "You answer why."


def test_json_pack_accepts_lists_of_lines(tmp_path: Path) -> None:
    f = tmp_path / "pack.json"
    f.write_text(json.dumps({"a": ["line 1", "line {n}"], "b": "x"}), encoding="utf-8")
    pack = load_pack(f)
    assert pack.render("a", n=2) == "line 1\nline 2"


def test_yaml_and_single_text_file(tmp_path: Path) -> None:
    y = tmp_path / "p.yaml"
    y.write_text("greet: |\n  Hello {who}\n", encoding="utf-8")
    assert load_pack(y).render("greet", who="you") == "Hello you\n"
    t = tmp_path / "only.txt"
    t.write_text("just {x}", encoding="utf-8")
    assert dict(load_pack(t)) == {"only": "just {x}"}


def test_placeholders_only_identifiers_other_braces_literal() -> None:
    text = 'JSON {"k": 1} and {{escaped}} and {name} and {not an id}'
    assert fill(text, {"name": "N"}) == 'JSON {"k": 1} and {escaped} and N and {not an id}'


def test_missing_value_names_template_and_value() -> None:
    pack = load_pack({"t": "Q: {question} C: {context}"})
    with pytest.raises(PromptError, match=r"template 't'.*\{context\}"):
        pack.render("t", question="q")


def test_missing_template_lists_available() -> None:
    pack = load_pack({"a": "x"})
    with pytest.raises(PromptError, match=r"no template 'b'.*it has: a"):
        pack.render("b")


def test_layering_replaces_only_named_templates(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("override a", encoding="utf-8")
    pack = load_prompts({"a": "default a", "b": "default b"}, tmp_path, required=["a", "b"])
    assert pack["a"] == "override a"
    assert pack["b"] == "default b"
    assert str(tmp_path) in pack.source


def test_required_checked_at_load() -> None:
    with pytest.raises(PromptError, match=r"lacks the template\(s\) \['c'\]"):
        load_prompts({"a": "x"}, None, required=["a", "c"])


def test_bad_sources_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match="not found"):
        load_pack(tmp_path / "nope")
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(PromptError, match="must be an object"):
        load_pack(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{oops", encoding="utf-8")
    with pytest.raises(PromptError, match="invalid JSON"):
        load_pack(broken)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(PromptError, match="no template files"):
        load_pack(empty)
    nontext = tmp_path / "n.json"
    nontext.write_text('{"a": 3}', encoding="utf-8")
    with pytest.raises(PromptError, match="'a' must be text"):
        load_pack(nontext)


def test_builtin_pack_by_name() -> None:
    pack = load_pack("hotpotqa")
    assert "react_instructions" in pack


def test_reads_the_papers_alfworld_prompt_file_as_an_external_pack(shared_data: Path) -> None:
    path = shared_data / "reflexion-original-prompts" / "alfworld_3prompts.json"
    pack = load_pack(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert set(pack) == set(raw)
    name = next(iter(raw))
    # Rendering with no values must give the text back unchanged (it has no placeholders).
    assert pack.placeholders(name) == set()
    assert pack.render(name) == raw[name]


def test_builtin_pack_has_every_template_the_roles_render() -> None:
    from reflexion_bench.actors.hotpotqa import CoTActor, ReActActor
    from reflexion_bench.environments.docstore import ContextDocstore
    from reflexion_bench.reflectors.hotpotqa import QAReflector
    from reflexion_bench.scorers.exact_match import ExactMatchScorer

    # Building each role checks its required templates against the built-in pack.
    CoTActor(with_context=False)
    CoTActor(with_context=True)
    ReActActor(docstore=ContextDocstore.from_pages([("A", ["a."])]))
    QAReflector()
    ExactMatchScorer(judge=True)
    pack = load_pack("hotpotqa")
    assert pack.placeholders("react_prompt") == {
        "examples",
        "memory",
        "question",
        "scratchpad",
        "step",
    }
    assert pack.placeholders("cot_context_prompt") == {"examples", "memory", "context", "question"}
    assert pack.placeholders("reflect_prompt") == {"examples", "trajectory", "feedback"}


def test_builtin_demonstrations_avoid_the_evaluation_questions(shared_data: Path) -> None:
    rows = [
        json.loads(line)
        for line in (shared_data / "hotpotqa-distractor-100.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip()
    ]
    text = "\n".join(load_pack("hotpotqa").values()).casefold()
    for r in rows:
        assert r["question"].strip().casefold()[:60] not in text
        if len(r["answer"]) > 8:  # short answers (yes, 2004) may occur by chance
            assert r["answer"].casefold() not in text, r["answer"]
