"""The output-folder comparison: records as a multiset without `versions`, tables byte for byte."""

from __future__ import annotations

import json
import pathlib

import pytest
from decbounds.paper_figures import compare
from decbounds.paper_figures.sweep import canonical_json


def _write_records(path: pathlib.Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(canonical_json(record) + "\n" for record in records))


def _folder(root: pathlib.Path, records: list[dict], table: str = "a,b\n1,2\n") -> pathlib.Path:
    _write_records(root / "fig" / "records.jsonl", records)
    (root / "fig_table.csv").write_text(table)
    (root / "fig.png").write_bytes(root.name.encode())  # images are not compared
    return root


RECORDS = [{"key": "k1", "result": {"t_eps": 3, "grid": [1, 2]}, "versions": {"commit": "a"}},
           {"key": "k2", "result": {"t_eps": 5, "grid": [1]}, "versions": {"commit": "a"}}]


def test_equal_folders_ignore_versions_line_order_and_images(tmp_path) -> None:
    before = _folder(tmp_path / "before", RECORDS)
    shuffled = [{**record, "versions": {"commit": "b"}} for record in reversed(RECORDS)]
    after = _folder(tmp_path / "after", shuffled)
    assert compare.compare_outputs(before, after) == []
    assert compare.main([str(before), str(after)]) == 0


def test_a_changed_result_names_the_record_and_field(tmp_path) -> None:
    before = _folder(tmp_path / "before", RECORDS)
    changed = json.loads(json.dumps(RECORDS))
    changed[1]["result"]["grid"] = [7]
    after = _folder(tmp_path / "after", changed)
    differences = compare.compare_outputs(before, after)
    assert differences == ["fig/records.jsonl: record k2 differs: result.grid.0: 1 != 7"]
    assert compare.main([str(before), str(after)]) == 1


def test_missing_extra_and_duplicated_records(tmp_path) -> None:
    before = _folder(tmp_path / "before", RECORDS)
    after = _folder(tmp_path / "after", [RECORDS[0], RECORDS[0], {"key": "k3", "result": {}}])
    text = "\n".join(compare.compare_outputs(before, after))
    assert "record k2 only in" in text and "record k3 only in" in text and "2 copies" in text


def test_tables_byte_for_byte_except_volatile_columns(tmp_path) -> None:
    before = _folder(tmp_path / "before", RECORDS, "a,b\n1,2\n")
    after = _folder(tmp_path / "after", RECORDS, "a,b\n1,2.0\n")
    assert compare.compare_outputs(before, after) == [
        "fig_table.csv: line 2 differs:\n    - 1,2\n    + 1,2.0"]
    timed_a = _folder(tmp_path / "ta", RECORDS, "a,seconds,b\n1,0.5,2\n")
    timed_b = _folder(tmp_path / "tb", RECORDS, "a,seconds,b\n1,0.75,2\n")
    assert compare.compare_outputs(timed_a, timed_b) == []


def test_files_on_one_side_and_the_only_filter(tmp_path) -> None:
    before = _folder(tmp_path / "before", RECORDS)
    (before / "other.md").write_text("x\n")
    after = _folder(tmp_path / "after", RECORDS)
    assert compare.compare_outputs(before, after) == [f"other.md: only in {before}"]
    assert compare.compare_outputs(before, after, allow_missing=True) == []
    assert compare.compare_outputs(before, after, only=["fig"]) == []
    (after / "new.csv").write_text("y\n")
    assert compare.compare_outputs(before, after, allow_missing=True) == [f"new.csv: only in {after}"]
    with pytest.raises(FileNotFoundError):
        compare.compare_outputs(before, tmp_path / "nowhere")
