"""The source-work (AFI "based on") TSV reader shared by ``cinesub copyright classify`` and the
``copyright-status`` stage (extractors/cce/source_works.py): rows, and every error path with its
reason code — a malformed file is never partly read."""

from __future__ import annotations

import pytest

from extractors.cce.source_works import REASONS, SourceWorksError, parse_source_works, read_source_works
from flows.stages.hollywood.cce import load_source_works
from validators.copyright_status import SourceWork

HEADER = "film_reg_id\tfilm_reg_date\tsource_title\trenewed\trenewal_id\n"


def test_rows_are_read_with_their_renewal_flags(tmp_path):
    p = tmp_path / "s.tsv"
    p.write_text("\ufeff" + HEADER + "LP4630\t1934-02-16\tWinter Orchard\tyes\tR231245\n"
                 "LP4520\t1934-01-15\tTempest\tNo\t\n\nLP6420\t\tRiver Road\tunknown\t\n", encoding="utf-8")
    assert read_source_works(p) == [SourceWork("LP4630", "1934-02-16", "Winter Orchard", True, "R231245"),
                                    SourceWork("LP4520", "1934-01-15", "Tempest", False, None),
                                    SourceWork("LP6420", None, "River Road", None, None)]


@pytest.mark.parametrize(("text", "code", "where"), [
    ("film_reg_id,film_reg_date,source_title,renewed\nLP1,1934-01-01,X,yes\n", "source_works:missing_column",
     "missing column"),
    (HEADER + "LP1\t1934-01-01\tX\tperhaps\t\n", "source_works:bad_renewed", ":2: renewed 'perhaps'"),
    (HEADER + "LP1\t1934-01-01\tX\tyes\t\nLP2\t15Jan34\tY\tno\t\n", "source_works:bad_date", ":3 film_reg_date"),
    (HEADER + "\t1934-01-01\tX\tyes\t\n", "source_works:empty_reg_id", ":2: empty film_reg_id"),
    (HEADER + "LP1\t1934-01-01\t\tyes\t\n", "source_works:empty_source_title", ":2: empty source_title"),
    (HEADER + "LP1\t1934-01-01\tX\tyes\tR1\textra\n", "source_works:bad_row", ":2: more cells"),
])
def test_a_malformed_file_is_an_error_with_its_reason_code(tmp_path, text, code, where):
    p = tmp_path / "bad.tsv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(SourceWorksError) as e:
        read_source_works(p)
    assert e.value.reason_code == code and code in REASONS
    assert str(p) in str(e.value) and where in str(e.value)
    # the stage fails on it too, naming the setting and the reason (nothing silently skipped)
    with pytest.raises(SourceWorksError) as e2:
        load_source_works(p)
    assert e2.value.reason_code == code and "hollywood.source_works_path" in str(e2.value) and code in str(e2.value)


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(SourceWorksError) as e:
        read_source_works(tmp_path / "nope.tsv")
    assert e.value.reason_code == "source_works:no_file"
    bad = tmp_path / "latin1.tsv"
    bad.write_bytes(HEADER.encode() + "LP1\t1934-01-01\tCaf\xe9\tyes\t\n".encode("latin-1"))
    with pytest.raises(SourceWorksError) as e:
        read_source_works(bad)
    assert e.value.reason_code == "source_works:unreadable"
    assert load_source_works(None) == []  # no file configured: rule R5 never applies
    assert parse_source_works(HEADER) == []


def test_classify_cli_reports_the_reason_code(tmp_path):
    from typer.testing import CliRunner

    from cinesub.cli import app

    (tmp_path / "r.tsv").write_text("title\treg_id\treg_date\nWinter Orchard\tLP4630\t1934-02-16\n")
    (tmp_path / "n.tsv").write_text("title\torig_reg_id\torig_date\trenewal_id\trenewal_date\n")
    (tmp_path / "s.tsv").write_text(HEADER + "LP4630\t1934-02-16\tWinter Orchard\tmaybe\t\n")
    res = CliRunner().invoke(app, ["copyright", "classify", "--registrations", str(tmp_path / "r.tsv"),
                                   "--renewals", str(tmp_path / "n.tsv"), "--source-works", str(tmp_path / "s.tsv"),
                                   "--as-of", "2026-01-01", "--json"])
    assert res.exit_code == 2 and "source_works:bad_renewed" in res.output
    (tmp_path / "s.tsv").write_text(HEADER + "LP4630\t1934-02-16\tWinter Orchard\tyes\tR231245\n")
    res = CliRunner().invoke(app, ["copyright", "classify", "--registrations", str(tmp_path / "r.tsv"),
                                   "--renewals", str(tmp_path / "n.tsv"), "--source-works", str(tmp_path / "s.tsv"),
                                   "--as-of", "2026-01-01", "--json"])
    assert res.exit_code == 0, res.output
    out = __import__("json").loads(res.stdout)
    assert out[0]["status"] == "protected" and "R5_source_work_renewed" in out[0]["reason"]


def test_stored_rows_carry_the_number_classify_reads():
    """An OCR-damaged class letter (1P) is stored normalised, so the collection audit joins the
    source work to the film exactly as classify() matched it; the number as given stays beside it."""
    from flows.stages.hollywood.cce import source_work_rows

    (row,) = source_work_rows([SourceWork("1P4630", "1934-02-16", "Winter Orchard (novel)", True, "R231245")])
    assert row["film_reg_id"] == "LP4630" and row["film_reg_id_raw"] == "1P4630"
    (same,) = source_work_rows([SourceWork("LP4630", "1934-02-16", "Winter Orchard (novel)", True, None)])
    assert same["film_reg_id"] == same["film_reg_id_raw"] == "LP4630"
