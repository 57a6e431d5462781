"""Import an ONNX classifier and run it with ONNX Runtime (CPU).

An ONNX file is a protobuf message without a magic number, so it is
recognised by parsing: :func:`onnx.load_model_from_string` decodes the bytes
into a ``ModelProto`` (plain data; nothing is executed and nothing is
unpickled). A parse that yields no graph, no operator set or no node is not an
ONNX model. A graph whose weights live in *external data* files is refused:
ONNX Runtime would read those files from this machine's disk.

The graph's inputs are matched to the table's columns in one of two ways:

* **one input per raw column** (a scikit-learn pipeline converted by skl2onnx
  with its preprocessing inside): each input is matched by name, a
  ``tensor(string)`` input to a text column, a numeric tensor to a numeric
  column;
* **one numeric tensor of width n** (a LightGBM or XGBoost booster converted by
  onnxmltools): its columns are the names listed, in order, by the model's
  ``feature_names`` metadata entry (a JSON list of strings). Without it the
  model is refused, naming that the column names are unknown.

Every mismatch is listed in one refusal (``IMPORT_ONNX_INPUTS``).

The model is audited **as it is**, in raw space: the :class:`FittedModel`
reads the raw columns, each raw column is one coordinate (its own evidence
group), and there is no preprocessor when every input is numeric. A text
input is carried as a number (its position in the sorted list of the
column's values in the table, :class:`RawTextCodes`), decoded back to the
text before the graph is run; a code between two categories (a mean or median
baseline) is rounded to the nearest one. A missing text value is passed as
the empty string.

ONNX Runtime computes in the graph's types; converters emit float32 for
trees and for skl2onnx's ZipMap output, so probabilities may differ from the
native float64 model by about 1e-7 (relative). See ``docs/data.md``.
"""
from __future__ import annotations

import json
from typing import Any, cast

import numpy as np
import pandas as pd

from audit_core.errors import fail, register_messages

from .zoo import FittedModel

__all__ = ["FEATURE_NAMES_KEY", "OnnxClassifier", "RawTextCodes", "is_onnx", "load_onnx"]

#: The ``metadata_props`` key listing a single-tensor model's column names (a JSON list of strings).
FEATURE_NAMES_KEY = "feature_names"

register_messages(
    {
        "IMPORT_ONNX_INPUTS": "The ONNX model in {name!r} cannot read this table: {problems}.",
        "IMPORT_ONNX_NAMES_UNKNOWN": (
            "The ONNX model in {name!r} takes one tensor {input!r} of width {width}, and the column names are "
            "unknown: its metadata has no usable '" + FEATURE_NAMES_KEY + "' entry ({detail}). Add the names in "
            "column order before saving: onnx.helper.set_model_props(model, {{'" + FEATURE_NAMES_KEY + "': "
            "json.dumps(column_names)}}), or convert with one input per column."
        ),
        "IMPORT_ONNX_EXTERNAL_DATA": (
            "The ONNX model in {name!r} keeps weights in external file(s) ({files}); they would be read from this "
            "machine's disk, so it is refused. Save it as one file (onnx.save_model(model, path, "
            "save_as_external_data=False))."
        ),
        "IMPORT_ONNX_NOT_FINITE": (
            "The ONNX model in {name!r} returned NaN or infinite probabilities for {n:,} of {total:,} rows, "
            "for example a row with a missing value in column(s) {columns}: its graph does not impute missing values."
        ),
        "IMPORT_ONNX_NO_PROBABILITIES": (
            "The ONNX model in {name!r} has no class-probability output (outputs: {outputs}). Import a classifier "
            "whose graph outputs probabilities (a ZipMap, or a float tensor with one column per class)."
        ),
    }
)

# TensorProto element types (onnx.TensorProto.DataType)
_FLOAT_TYPES = {1: np.float32, 11: np.float64}
_INT_TYPES = {6: np.int32, 7: np.int64}
_STRING = 8
_TYPE_NAMES = {1: "float", 11: "double", 6: "int32", 7: "int64", 8: "string"}
_CLASS_ATTRS = ("classlabels_int64s", "classlabels_ints", "classlabels_strings")


def is_onnx(data: bytes) -> bool:
    """Whether ``data`` parses as an ONNX ``ModelProto`` with an operator set and a non-empty graph."""
    import onnx

    try:
        model = onnx.load_model_from_string(data)
    except Exception:  # noqa: BLE001 - protobuf's DecodeError and friends: not ONNX
        return False
    return model.ir_version > 0 and len(model.opset_import) > 0 and len(model.graph.node) > 0


class RawTextCodes:
    """Raw frame → float matrix: numeric columns as they are, text columns as codes into a vocabulary.

    Parameters
    ----------
    columns : sequence of str
        The model's raw input columns, in order.
    vocab : mapping str -> tuple of str
        For each text column, its sorted values (the empty string stands for a missing value).
    name : str
        The model's file name, for messages.
    """

    def __init__(self, columns, vocab, *, name: str = "the imported model") -> None:
        self.columns, self.name = tuple(columns), name
        self.vocab = {c: tuple(v) for c, v in vocab.items()}
        self._index = {c: {s: i for i, s in enumerate(v)} for c, v in self.vocab.items()}

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """Frame of shape (n, n_columns) → float matrix of shape (n, n_columns)."""
        out = np.empty((len(X), len(self.columns)))
        for j, c in enumerate(self.columns):
            if c in self.vocab:
                text = _as_text(X[c])
                codes = pd.Series(text).map(self._index[c])
                unseen = sorted(set(text[codes.isna().to_numpy()]))
                if unseen:
                    raise fail("IMPORT_ONNX_INPUTS", name=self.name,
                               problems=f"column {c!r} holds value(s) {', '.join(map(repr, unseen[:5]))} "
                                        "not seen when the model was imported")
                out[:, j] = codes.to_numpy(dtype=float)
            else:
                out[:, j] = X[c].to_numpy(dtype=float)
        return out

    def decode(self, column: str, codes: np.ndarray) -> np.ndarray:
        """Codes of shape (n,) → text of shape (n,) (rounded to the nearest category)."""
        values = self.vocab[column]
        idx = np.clip(np.rint(np.asarray(codes, dtype=float)), 0, len(values) - 1).astype(np.int64)
        return np.asarray(values, dtype=object)[idx]


def _as_text(s: pd.Series) -> np.ndarray:
    return np.asarray(["" if pd.isna(v) else str(v) for v in s], dtype=object)


class OnnxClassifier:
    """``predict_proba`` over an ONNX graph, on the raw-space matrix of :class:`FittedModel`.

    Parameters
    ----------
    data : bytes
        The serialised model (kept so the classifier can be copied to worker processes).
    feeds : list of (input name, element type, column positions)
        How the matrix's columns become the graph's inputs.
    output : str
        The probability output.
    classes : tuple
        Class labels in probability column order.
    codes : RawTextCodes or None
        Decodes text columns.
    """

    def __init__(self, data: bytes, *, feeds, output: str, classes: tuple, codes: RawTextCodes | None,
                 name: str = "the imported model", columns: tuple[str, ...] = ()) -> None:
        self.data, self.feeds, self.output, self.codes = data, list(feeds), output, codes
        self.name, self.columns = name, tuple(columns)
        self.classes_ = np.asarray(classes)
        self._session: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_session"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._session = None

    def _run(self, feed: dict[str, np.ndarray]):
        if self._session is None:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            self._session = ort.InferenceSession(self.data, sess_options=opts, providers=["CPUExecutionProvider"])
        return self._session.run([self.output], feed)[0]

    def predict_proba(self, X) -> np.ndarray:
        """Matrix of shape (n, n_columns) → probabilities of shape (n, n_classes), in ``classes_`` order."""
        X = np.asarray(X, dtype=float)
        feed = {}
        for name, elem, cols in self.feeds:
            if elem == _STRING:
                codes = cast(RawTextCodes, self.codes)  # set whenever an input is text
                feed[name] = codes.decode(codes.columns[cols[0]], X[:, cols[0]]).reshape(-1, 1)
            elif elem in _INT_TYPES:
                feed[name] = np.rint(X[:, cols]).astype(_INT_TYPES[elem])
            else:
                feed[name] = X[:, cols].astype(_FLOAT_TYPES[elem])
        out = self._run(feed)
        if isinstance(out, list):  # ZipMap: one {label: probability} per row
            p = np.array([[row[c] for c in self.classes_.tolist()] for row in out], dtype=float)
        else:
            p = np.asarray(out, dtype=float).reshape(len(X), -1)
        bad = ~np.isfinite(p).all(axis=1)
        if bad.any():
            first = X[np.flatnonzero(bad)[0]]
            cols = [c for c, v in zip(self.columns, first, strict=False) if np.isnan(v)] or ["(none)"]
            raise fail("IMPORT_ONNX_NOT_FINITE", name=self.name, n=int(bad.sum()), total=len(X),
                       columns=", ".join(repr(c) for c in cols[:5]))
        return p / p.sum(axis=1, keepdims=True)  # float32 rows sum to 1 within ~1e-7; make it exact in float64


def _elem_type(value_info) -> tuple[int | None, list[int | None]]:
    t = value_info.type
    if not t.HasField("tensor_type"):
        return None, []
    dims = [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]
    return t.tensor_type.elem_type, dims


def _describe(value_info) -> str:
    t = value_info.type
    if t.HasField("tensor_type"):
        return f"{value_info.name!r} (tensor({_TYPE_NAMES.get(t.tensor_type.elem_type, t.tensor_type.elem_type)}))"
    if t.HasField("sequence_type"):
        return f"{value_info.name!r} (sequence)"
    return f"{value_info.name!r}"


def _probability_output(graph, name: str) -> tuple[str, Any]:
    """The probability output's name and the node that produces it."""
    producers = {o: node for node in graph.node for o in node.output}
    for out in graph.output:  # a ZipMap output: a sequence of maps
        if out.type.HasField("sequence_type") and out.type.sequence_type.elem_type.HasField("map_type"):
            return out.name, producers.get(out.name)
    # a 2-D float tensor of at least two columns (a width-1 output is a score or a regression, not probabilities);
    # one of unknown width only when its name says so
    tensors = [o for o in graph.output if _elem_type(o)[0] in _FLOAT_TYPES and len(_elem_type(o)[1]) == 2
               and _elem_type(o)[1][1] != 1 and (_elem_type(o)[1][1] or "prob" in o.name.lower())]
    named = [o for o in tensors if "prob" in o.name.lower()]
    chosen = named or tensors
    if len(chosen) != 1:
        raise fail("IMPORT_ONNX_NO_PROBABILITIES", name=name, outputs=", ".join(_describe(o) for o in graph.output))
    return chosen[0].name, producers.get(chosen[0].name)


def _class_labels(graph, producer, n_hint: int | None) -> tuple:
    """Class labels from the ZipMap (or classifier) node's ``classlabels_*`` attribute."""
    from onnx import helper

    nodes = ([producer] if producer is not None else []) + list(graph.node)
    for node in nodes:
        for attr in node.attribute:
            if attr.name in _CLASS_ATTRS:
                values = helper.get_attribute_value(attr)
                return tuple(v.decode() if isinstance(v, bytes) else int(v) for v in values)
    return tuple(range(n_hint or 2))


def _single_tensor_names(model, inp, width: int | None, name: str) -> list[str]:
    props = {p.key: p.value for p in model.metadata_props}
    raw = props.get(FEATURE_NAMES_KEY)
    detail = "no entry"
    if raw is not None:
        try:
            names = json.loads(raw)
        except ValueError:
            names, detail = None, "not a JSON list"
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            if width is None or len(names) == width:
                return names
            raise fail("IMPORT_ONNX_INPUTS", name=name,
                       problems=f"input {inp.name!r} has width {width} but its '{FEATURE_NAMES_KEY}' metadata lists "
                                f"{len(names)} names")
        detail = "not a JSON list of strings" if detail == "no entry" else detail
    raise fail("IMPORT_ONNX_NAMES_UNKNOWN", name=name, input=inp.name, width=width, detail=detail)


#: One graph input: its name, its element type and the matrix columns it reads.
Feed = tuple[str, Any, list[int]]


def _match_inputs(model, table: pd.DataFrame, name: str) -> tuple[list[str], list[Feed]]:
    """Raw columns in matrix order, and the feeds ``(input, element type, column positions)``; refuses mismatches."""
    graph = model.graph
    initialisers = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initialisers]
    problems: list[str] = []
    columns: list[str] = []
    feeds: list[Feed] = []

    def check(column: str, elem: int | None, where: str) -> None:
        if column not in table.columns:
            problems.append(f"column {column!r} is missing from the table")
            return
        numeric = pd.api.types.is_numeric_dtype(table[column].dtype) and not pd.api.types.is_bool_dtype(table[column])
        if elem == _STRING and numeric:
            problems.append(f"column {column!r} holds numbers but {where} expects text (tensor(string))")
        elif elem in _FLOAT_TYPES or elem in _INT_TYPES:
            if not numeric:
                problems.append(f"column {column!r} holds text but {where} expects numbers "
                                f"(tensor({_TYPE_NAMES[elem]}))")
        elif elem != _STRING:
            problems.append(f"{where} has an unsupported type ({_describe_type(elem)})")

    if len(inputs) == 1 and inputs[0].name not in table.columns:
        elem, dims = _elem_type(inputs[0])
        width = dims[1] if len(dims) == 2 else None
        if elem not in _FLOAT_TYPES and elem not in _INT_TYPES:
            raise fail("IMPORT_ONNX_INPUTS", name=name,
                       problems=f"its only input {inputs[0].name!r} is not a numeric tensor ({_describe_type(elem)}) "
                                "and no column has its name")
        columns = _single_tensor_names(model, inputs[0], width, name)
        for c in columns:
            check(c, elem, f"feature {c!r} of input {inputs[0].name!r}")
        feeds = [(inputs[0].name, elem, list(range(len(columns))))]
    else:
        for j, inp in enumerate(inputs):
            elem, dims = _elem_type(inp)
            if len(dims) == 2 and dims[1] not in (None, 1):
                problems.append(f"input {inp.name!r} has width {dims[1]}, but an input read from one column "
                                "has width 1")
            check(inp.name, elem, f"the model's input {inp.name!r}")
            columns.append(inp.name)
            feeds.append((inp.name, elem, [j]))
    if problems:
        raise fail("IMPORT_ONNX_INPUTS", name=name, problems="; ".join(problems[:10]))
    return columns, feeds


def _describe_type(elem: int | None) -> str:
    return "not a tensor" if elem is None else f"tensor({_TYPE_NAMES.get(elem, f'type {elem}')})"


def load_onnx(data: bytes, *, name: str, table: pd.DataFrame) -> FittedModel:
    """Load an ONNX classifier and match its inputs to ``table``'s columns.

    Parameters
    ----------
    data : bytes
        The ``.onnx`` file.
    name : str
        File name, for messages.
    table : pandas.DataFrame of shape (n_rows, n_columns)
        The table the model will score; text columns' values form the codes of :class:`RawTextCodes`.

    Returns
    -------
    FittedModel
        ``spec["kind"] == "imported_onnx"``; input columns = the raw columns read; each raw column is its own feature.

    Raises
    ------
    AuditInputError
        ``IMPORT_UNREADABLE``, ``IMPORT_ONNX_EXTERNAL_DATA``, ``IMPORT_ONNX_INPUTS`` (every mismatch listed),
        ``IMPORT_ONNX_NAMES_UNKNOWN``, ``IMPORT_ONNX_NO_PROBABILITIES``.
    """
    import onnx

    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # noqa: BLE001 - protobuf decode errors
        raise fail("IMPORT_UNREADABLE", name=name, fmt="ONNX", detail=str(exc)[:200]) from None
    if not len(model.graph.node):
        raise fail("IMPORT_UNREADABLE", name=name, fmt="ONNX", detail="the file holds no graph")
    external = sorted({e.value for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
                       for e in t.external_data if e.key == "location"})
    if external or any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer):
        raise fail("IMPORT_ONNX_EXTERNAL_DATA", name=name, files=", ".join(repr(f) for f in external[:5]) or "unnamed")
    output, producer = _probability_output(model.graph, name)  # first: a regressor is refused as one
    columns, feeds = _match_inputs(model, table, name)
    out_info = next(o for o in model.graph.output if o.name == output)
    dims = _elem_type(out_info)[1]
    classes = _class_labels(model.graph, producer, dims[1] if len(dims) == 2 else None)
    text = [c for (_, elem, cols) in feeds if elem == _STRING for c in (columns[cols[0]],)]
    # "" (a missing value) is always a category: a stress may set any value missing
    vocab = {c: sorted(set(_as_text(table[c])) | {""}) for c in text}
    codes = RawTextCodes(columns, vocab, name=name) if text else None
    est = OnnxClassifier(data, feeds=feeds, output=output, classes=classes, codes=codes, name=name, columns=tuple(columns))
    try:
        est.predict_proba(codes.transform(table.iloc[:2][columns]) if codes else
                          table.iloc[:2][columns].to_numpy(dtype=float))
    except Exception as exc:  # noqa: BLE001 - ONNX Runtime refuses graphs it cannot run
        raise fail("IMPORT_UNREADABLE", name=name, fmt="ONNX", detail=" ".join(str(exc).split())[:200]) from None
    kinds = ["categorical" if c in text else "numeric" for c in columns]
    origins = pd.DataFrame({"feature": columns, "raw_column": columns, "kind": kinds, "category": [""] * len(columns)})
    return FittedModel(
        spec={"kind": "imported_onnx", "source": name, "producer": model.producer_name or "unknown"},
        input_columns=tuple(columns),
        preprocessor=codes,
        estimator=est,
        classes=classes,
        origins=origins,
    )
