"""Pages warn where a result is weak (AppTest): a model whose predictions are constant is not "ready"."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_text import texts

ROOT = Path(__file__).resolve().parents[1]


def _data_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/data_groups.py").run()
    assert not at.exception, at.exception
    return at


def test_a_model_with_constant_predictions_is_not_announced_as_ready(registry_path) -> None:
    """Breast cancer, radius 12.5-14: 122 eligible rows, 91 for training. LightGBM's 50 rows per leaf cannot split
    91 rows, so every held-out row gets the training prevalence: a warning with the numbers, no green box."""
    at = _data_page()
    at.selectbox(key="dg_sample").set_value("breast_cancer").run()
    at.text_input(key="dg_eligibility").set_value("`mean radius` > 12.5 and `mean radius` < 14").run()
    at.selectbox(key="dg_model_kind").set_value("lightgbm").run()
    at.button(key="act_train").click().run()
    assert not at.exception and not at.error, (at.exception, texts(at, "error"))
    assert not any("Model ready" in t for t in texts(at, "success"))
    warnings = texts(at, "warning")
    head = next(t for t in warnings if t.startswith("Model trained, but its predictions are (nearly) constant: lightgbm"))
    assert "held-out AUROC 0.500" in head
    constant = next(t for t in warnings if t.startswith("The model's predictions are (nearly) constant"))
    assert "over the 31 held-out rows no class probability moves by more than 0.0000" in constant
    assert "With 91 training rows" in constant
    # the same rows with logistic regression: a model that learned, announced as ready
    at.selectbox(key="dg_model_kind").set_value("logistic_regression").run()
    at.button(key="act_train").click().run()
    assert any(t.startswith("Model ready: logistic_regression") for t in texts(at, "success"))
    assert not any("constant" in t for t in texts(at, "warning"))
