"""The command line's tools from Python: analyzer reports and benchmark records."""

import pytest

import redlab


def test_analyze_returns_the_report():
    report = redlab.analyze("reduce1")
    assert report["kernel"] == "reduce"
    assert report["divergent_branches"] > 0
    assert report["bank_conflicts"]["local_load"] > 0


def test_bench_returns_verified_records():
    records = redlab.bench(sizes="2^12,1001", ops="sum,max", dtypes="f32,i32", min_time=0.01)
    assert len(records) == 8
    assert all(r["status"] == "ok" and r["gbps"] > 0 for r in records)


def test_command_errors_raise():
    with pytest.raises(redlab.CommandError) as failure:
        redlab.bench(sizes="nonsense")
    assert failure.value.code == 2
