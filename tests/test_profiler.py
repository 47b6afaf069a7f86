"""``tidu.profiler``: the ops and ranges it records, its table, its schedule (against PyTorch's),
and that it leaves tidu's dispatch functions as they were when it stops."""

from __future__ import annotations

import json
import os
import warnings

import pytest
import torch
import torch.profiler

import tidu
from tidu.core import deferred, dispatch
from tidu.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _counts(prof, prefix):
    """Calls per key (but the queued elementwise work's runs, which ``TIDU_FUSION=0`` has none of)."""
    return {e.key: e.count for e in prof.key_averages()
            if e.key.startswith(prefix) and e.key != "tidu::flush_deferred"}


def test_ops_are_counted_as_pytorch_counts_them() -> None:
    a, b = tidu.ones(16), tidu.ones(16)
    ta, tb = torch.ones(16), torch.ones(16)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            a * b
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tprof:
        for _ in range(3):
            ta * tb
    assert _counts(prof, "tidu::")["tidu::mul"] == _counts(tprof, "aten::")["aten::mul"] == 3


def test_input_shapes_match_pytorchs() -> None:
    a, b = tidu.ones(16), tidu.ones(16)
    ta, tb = torch.ones(16), torch.ones(16)
    with profile(record_shapes=True) as prof:
        a * b
    with torch.profiler.profile(record_shapes=True) as tprof:
        ta * tb
    ours = {e.key: e.input_shapes for e in prof.key_averages(group_by_input_shape=True)}
    theirs = {e.key: e.input_shapes for e in tprof.key_averages(group_by_input_shape=True)}
    assert ours["tidu::mul"] == theirs["aten::mul"] == [[16], [16]]


def test_record_function_nests_ops_and_self_time_excludes_them() -> None:
    x = tidu.ones(4, 4)
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                y = x @ x
            y.sum()
    events = {e.name: e for e in prof.events()}
    outer, inner = events["outer"], events["inner"]
    assert events["tidu::dot_general"].depth == 2 and inner.depth == 1 and outer.depth == 0
    assert outer.start_ns <= inner.start_ns <= inner.end_ns <= outer.end_ns
    children = inner.cpu_time_total + events["tidu::reduce_sum"].cpu_time_total
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - children)
    assert inner.self_cpu_time_total == pytest.approx(inner.cpu_time_total
                                                      - events["tidu::dot_general"].cpu_time_total)


def test_record_function_is_a_decorator_and_a_no_op_outside_a_profile() -> None:
    @record_function("twice")
    def twice(x):
        return x * 2

    assert twice(tidu.ones(2)).tolist() == [2.0, 2.0]
    with record_function("alone"):
        pass
    with profile() as prof:
        twice(tidu.ones(2))
        twice(tidu.ones(2))
    assert _counts(prof, "")["twice"] == 2
    with pytest.raises(TypeError, match="name must be a str"):
        record_function(3)


def test_backward_and_queued_work_are_events() -> None:
    x = tidu.ones(8, requires_grad=True)
    before = deferred.ENABLED
    deferred.ENABLED = True
    try:
        with profile() as prof:
            y = (x * 2 + 1).exp()
            y.sum().backward()
            (x.detach() * 3 + 1).tolist()
    finally:
        deferred.ENABLED = before
    keys = {e.key for e in prof.events()}
    assert {"autograd::backward", "tidu::flush_deferred", "tidu::mul", "tidu::add", "tidu::exp"} <= keys


def test_table_lists_names_counts_and_times() -> None:
    a = tidu.ones(16)
    with profile() as prof:
        for _ in range(5):
            a * a
        a + a
    text = prof.key_averages().table(sort_by="count", row_limit=1)
    header = [line for line in text.splitlines() if "Name" in line][0].split()
    assert header[:3] == ["Name", "Self", "CPU"] and "Calls" in header
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("tidu::")]
    assert len(rows) == 1 and rows[0][0] == "tidu::mul" and rows[0][-1] == "5"
    assert "Self CPU time total:" in text
    assert "tidu::add" in prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1)
    with pytest.raises(AttributeError, match="bogus"):
        prof.key_averages().table(sort_by="bogus")
    with torch.profiler.profile() as tprof:
        torch.ones(1) * 2
    with pytest.raises(AttributeError, match="bogus"):
        tprof.key_averages().table(sort_by="bogus")


def test_with_stack_names_the_calling_line() -> None:
    with profile(with_stack=True) as prof:
        tidu.ones(2) * 2
    (event,) = [e for e in prof.events() if e.key == "tidu::mul"]
    assert os.path.basename(__file__) in event.stack[0]
    text = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in text and "test_with_stack_names_the_calling_line" in text


@pytest.mark.parametrize("args", [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
                                  dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
                                  dict(wait=3, warmup=1, active=1, skip_first=2, skip_first_wait=1)])
def test_schedule_matches_pytorchs(args) -> None:
    ours, theirs = schedule(**args), torch.profiler.schedule(**args)
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


def test_schedule_rejects_what_pytorch_rejects() -> None:
    with pytest.raises(AssertionError, match="active=0"):
        schedule(wait=0, warmup=1, active=0)
    with pytest.raises(AssertionError):
        torch.profiler.schedule(wait=0, warmup=1, active=0)
    with pytest.warns(UserWarning, match="warmup"):
        schedule(wait=0, warmup=0, active=1)


def test_scheduled_profile_hands_over_traces_as_pytorchs_does() -> None:
    def run(profile_cls, sched, steps, make):
        traces = []
        with profile_cls(schedule=sched, on_trace_ready=lambda p: traces.append(p.step_num)) as prof:
            for _ in range(steps):
                make()
                prof.step()
        return traces, prof.step_num

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args, steps in ((dict(wait=1, warmup=1, active=2), 9), (dict(wait=0, warmup=1, active=1, repeat=2), 7)):
            ours = run(profile, schedule(**args), steps, lambda: tidu.ones(2) * 2)
            theirs = run(torch.profiler.profile, torch.profiler.schedule(**args), steps, lambda: torch.ones(2) * 2)
            assert ours == theirs


def test_a_scheduled_profile_records_only_active_steps() -> None:
    a = tidu.ones(2)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1)) as prof:
        for _ in range(6):
            a * 2
            prof.step()
    counts = _counts(prof, "")
    assert counts == {"ProfilerStep#2": 1, "tidu::mul": 2, "ProfilerStep#3": 1}


def test_dispatch_functions_are_restored_when_recording_stops() -> None:
    from tidu.ops import math

    originals = (dispatch.bind_same, dispatch.bind_eager, math.bind_same, deferred.flush)
    with profile():
        assert math.bind_same is not originals[2] and math.bind_same.__wrapped__ is originals[2]
    assert (dispatch.bind_same, dispatch.bind_eager, math.bind_same, deferred.flush) == originals
    with pytest.raises(ZeroDivisionError):
        with profile():
            raise ZeroDivisionError
    assert math.bind_same is originals[2]


def test_one_profile_at_a_time() -> None:
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            profile().start()
    with profile():  # the first one stopped cleanly
        pass


def test_activities_must_be_profiler_activities() -> None:
    with pytest.raises(TypeError, match="ProfilerActivity"):
        profile(activities=["cpu"])
    assert ProfilerAction.RECORD_AND_SAVE.value == torch.profiler.ProfilerAction.RECORD_AND_SAVE.value


def test_chrome_trace_and_tensorboard_handler(tmp_path) -> None:
    with profile(record_shapes=True,
                 on_trace_ready=tidu.profiler.tensorboard_trace_handler(str(tmp_path / "tb"), "worker")) as prof:
        with record_function("region"):
            tidu.ones(3) @ tidu.ones(3, 2)
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert [(e["name"], e["cat"]) for e in trace] == [("region", "user_annotation"), ("tidu::dot_general", "cpu_op")]
    assert trace[1]["args"]["Input Dims"] == [[3], [3, 2]]
    (written,) = os.listdir(tmp_path / "tb")
    assert written.startswith("worker.") and written.endswith(".pt.trace.json")


def test_autograd_profiler_names() -> None:
    with tidu.autograd.profiler.profile(record_shapes=True) as prof:
        with tidu.autograd.profiler.record_function("block"):
            tidu.ones(2) @ tidu.ones(2)
    assert [e.key for e in prof.function_events] == ["block", "tidu::dot_general"]
    assert prof.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in prof.function_events))
    assert "tidu::dot_general" in prof.table()
    assert hasattr(torch.autograd.profiler, "profile") and hasattr(torch.autograd.profiler, "record_function")
