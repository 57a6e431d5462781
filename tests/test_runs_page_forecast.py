"""AppTest of Runs & reports, "Check a forecast": a forecast saved before the labels arrived (the loan sample's 2023
rows with no outcome) against the labelled run of the same declaration, and a mismatched pair refused."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from audit_core.runs.registry import RunRegistry

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunRegistry:
    path = tmp_path / "registry.sqlite3"
    monkeypatch.setenv("AUDIT_REGISTRY_PATH", str(path))
    return RunRegistry(path)


def _save_runs(reg: RunRegistry) -> dict[str, str]:
    """A forecast run on the table whose 2023 rows have no `defaulted` (as the Transport page runs it), the labelled
    run of the same declaration on the whole table, and a labelled run of another declaration (seed 1)."""
    from audit_core.data.dataset import DatasetConfig, build_dataset, build_source_dataset
    from audit_core.data.samples import load_sample
    from audit_core.forecast import run_transport_with_forecast
    from audit_core.transport import TransportConfig

    frame, info = load_sample("loan_synthetic")
    ds_cfg = DatasetConfig(name="loan", targets=info.target_definitions[:1], domain_column="year", source_domain=2019,
                           target_domain=2023, group_column="branch_id",
                           roles={c: "ignore" for c in info.exclude_columns})
    opts = dict(n_refits=1, n_bootstrap=20, stresses=(), mappings=("platt",))
    blank = frame.copy()
    blank.loc[blank["year"] == 2023, "defaulted"] = np.nan
    src, target = build_source_dataset(blank, ds_cfg)
    fc = run_transport_with_forecast(src.frame, target, config=TransportConfig.from_dataset(
        src, target_labels="absent", **opts))
    ids = {"forecast": fc.save_to_registry(reg, dataset_name="loan", dataset_fingerprint=src.fingerprint)}
    full = build_dataset(frame, ds_cfg)
    for name, seed in (("other", 1), ("labelled", 0)):  # the matching one newest
        res = run_transport_with_forecast(full.frame, config=TransportConfig.from_dataset(full, seed=seed, **opts))
        ids[name] = res.save_to_registry(reg, dataset_name="loan", dataset_fingerprint=full.fingerprint)
    return ids


def test_check_a_forecast_against_its_labelled_run(reg: RunRegistry) -> None:
    ids = _save_runs(reg)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at = at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert "Check a forecast" in [t.label for t in at.tabs]
    forecasts = at.selectbox(key="ru_fc_forecast").options  # only the label-free run
    assert len(forecasts) == 1 and ids["forecast"][-8:] in forecasts[0]
    labelled = at.selectbox(key="ru_fc_labelled")
    assert len(labelled.options) == 1 and ids["labelled"][-8:] in labelled.options[0]  # only the same declaration
    sentences = [t.value for t in at.text if "Once the labels arrived" in t.value]
    assert len(sentences) == 1 and "realised values fell inside" in sentences[0]
    assert ", one refit):" in sentences[0]  # both runs were made with n_refits=1; the sentence names it
    shown = next(df.value for df in at.dataframe if "beats 'unchanged from source'" in df.value.columns)
    assert len(shown) > 0
    # the sentence counts the rows of the table beside it
    trusted = shown[shown["inside"] != "not counted"]
    assert f"{int((trusted['inside'] == 'yes').sum())} of {len(trusted)} realised values" in sentences[0]
    assert any(c.key == "view_ru_fc_figure" for c in at.get("plotly_chart"))

    # every labelled run on request: the other declaration is refused with a message, never a traceback
    at.checkbox(key="ru_fc_all").check().run()
    at.selectbox(key="ru_fc_labelled").set_value(ids["other"]).run()
    assert not at.exception, at.exception
    said = [w.value for w in at.warning if "declaration keys differ" in w.value]
    assert said, [w.value for w in at.warning]
    assert not [t for t in at.text if "Once the labels arrived" in t.value]


def test_no_matching_labelled_run_says_how_to_get_one(reg: RunRegistry) -> None:
    ids = _save_runs(reg)
    reg.delete(ids["labelled"])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at = at.switch_page("pages/runs.py").run()
    assert not at.exception, at.exception
    assert any("run Transport with labels available on the same data and declaration" in i.value for i in at.info)
