"""Measured points: :func:`calibrate` fits efficiency profiles to them,
:func:`validate` predicts and compares them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence, Union

from . import _core
from ._checks import _text
from ._core.reports import Calibration

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    from ._hints import *  # noqa: F403 (Unpack and a lazy pd, for typing.get_type_hints)


PointsFiles = Union[str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]]


def _points_files(path: PointsFiles) -> list[str]:
    # One file, or several read together (``llmroof validate A.csv B.csv``).
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("path must name at least one points file (got an empty list)")
        return [os.fspath(p) for p in path]
    raise TypeError(f"path must be a file or a list of files (got {type(path).__name__})")


def calibrate(path: PointsFiles, *, scope: str = "engine-kind") -> Calibration:
    """Fit efficiency profiles to measured points (the column layout of
    calibration.csv, docs/calibration.md), from one file or a list of files
    read together: one per engine and memory kind (``engine-kind``), per
    engine, or ``global``. Returns :class:`Calibration` (``to_dict()``: the
    ``llmroof calibrate --json`` report): fitted values with standard errors,
    residuals, and the rows that could not be mapped with the reason."""
    return _core.calibrate.calibrate_report(_points_files(path), _text("scope", scope))


def validate(path: PointsFiles, *, refit: bool = False,
             report: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Predict every row of a points file (the column layout of
    calibration.csv, docs/calibration.md) and compare with what was measured.

    Parameters
    ----------
    path
        The points file, or a list of files read together (the shipped fit
        reads ``calibration.csv`` and ``release3/single_stream.csv``).
    refit
        False (default): the profiles llmroof ships, no fitting: what
        llmroof answers out of the box on your measurements. True:
        leave-one-source-out cross-validation at the profile scope
        ``llmroof validate`` chooses. Either way each prediction carries its
        band (``low``, ``high``: the profile one standard error slower and
        faster).
    report
        A folder to write ``report.md`` (MdAPE by scope, metric and engine;
        the worst points with their likely reasons; the rows not mapped) and
        ``predictions.csv`` into, as ``llmroof validate --report DIR`` does.

    Returns
    -------
    pandas.DataFrame
        One row per mapped point: id, source, engine, device, devices,
        memory_kind, model, weights, metric, batch, prompt, measured,
        predicted, low, high, ape, likely_reason (why it is off, in words). ``attrs`` holds the headline MdAPEs
        (``scopes``; ``metrics`` with band coverage) and the rows that could not be mapped
        (``skipped_rows``), as ``llmroof validate --json`` reports them.
    """
    if not isinstance(refit, bool):
        raise TypeError(f"refit must be a bool (got {type(refit).__name__})")
    return _core.calibrate.validate_report(_points_files(path), refit, None if report is None else os.fspath(report))
