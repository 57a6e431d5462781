"""Recognise common model files that are not imported, and say why and what to do instead.

skops files, LightGBM text models, ONNX classifiers and XGBoost JSON/UBJ models
are imported (:mod:`.importing`). A user often has a pickle, a joblib file or
an MLflow model folder instead; each is
recognised here by its bytes (or its name) **without being opened**, so the
refusal can name the format, the reason and the way forward:

* **pickle** (protocol 2 and later begin with ``0x80`` and the protocol
  number; protocols 0 and 1 are recognised by parsing their first opcodes with
  :func:`pickletools.genops`, which decodes opcodes and never builds objects)
  and **joblib** (a pickle, or one compressed with zlib, gzip, bz2, xz/LZMA or
  LZ4; the stdlib codecs are checked by decompressing the first bytes and
  finding a pickle inside). Loading either runs whatever code the file names.
* an **MLflow model** (a zip holding an ``MLmodel`` file, or that file on its
  own): ``MLmodel`` is YAML read with :func:`audit_core.safe_text.load_yaml`;
  its ``flavors`` keys say what the folder holds, and the message says how to
  save that flavour in an accepted format.
* **CatBoost** (``.cbm``, or the ``CBM1`` header): not supported; the
  message says how to export it to ONNX, which is imported.

Anything else falls through to the importer, which refuses unknown bytes with
``IMPORT_UNKNOWN_FORMAT``.
"""
from __future__ import annotations

import bz2
import io
import lzma
import pickletools
import zipfile
import zlib
from pathlib import PurePosixPath

from audit_core.errors import fail, register_messages
from audit_core.safe_text import load_yaml

__all__ = ["ACCEPTED_FORMATS", "mlflow_flavours", "refuse_known_format"]

ACCEPTED_FORMATS = (
    "a scikit-learn model or pipeline saved with skops (.skops), a LightGBM text model (.txt), an ONNX classifier "
    "(.onnx) or an XGBoost model saved as JSON or UBJ (.json, .ubj; optional extra)"
)

_SAVE_SKOPS = "skops.io.dump(model, 'model.skops')"
_SAVE_LIGHTGBM = "model.booster_.save_model('model.txt') (or booster.save_model('model.txt') for a Booster)"
_SAVE_XGBOOST = "model.save_model('model.json') (a Booster or an XGBClassifier; '.ubj' for binary JSON)"
_SAVE_CATBOOST_ONNX = "model.save_model('model.onnx', format='onnx')"

register_messages(
    {
        "IMPORT_PICKLE": (
            "{name!r} is a {kind} file. It is refused without being opened: loading a pickle runs whatever code "
            "the file names, so a model file could run anything on this machine. Convert it where you trust it: "
            "load it in your own Python and save a scikit-learn model with " + _SAVE_SKOPS
            + ", a LightGBM model with " + _SAVE_LIGHTGBM + ", or an XGBoost model with " + _SAVE_XGBOOST
            + ". Accepted: {accepted}."
        ),
        "IMPORT_MLFLOW": (
            "{name!r} is an MLflow model ({flavours}). MLflow folders are not imported: the model inside is a pickle "
            "(or a format not supported yet). {how} Accepted: {accepted}."
        ),
        "IMPORT_NOT_SUPPORTED_YET": "{name!r} looks like {kind}, which is not supported yet. {how} Accepted: {accepted}.",
    }
)

_PICKLE_NAMES = (".pkl", ".pickle", ".pck", ".joblib", ".sav")
_PROTOCOL_01_STARTS = frozenset(b"(c}]")  # MARK, GLOBAL, EMPTY_DICT, EMPTY_LIST: how models' pickles begin
_MLMODEL_MAX_BYTES = 1 << 20

_FLAVOUR_HOW = {
    "sklearn": "Its sklearn flavour can be saved for import: load it with mlflow.sklearn.load_model(path) and save "
    "it with " + _SAVE_SKOPS + ".",
    "lightgbm": "Its lightgbm flavour can be saved for import: load it with mlflow.lightgbm.load_model(path) and "
    "save it with " + _SAVE_LIGHTGBM + ".",
    "xgboost": "Its xgboost flavour can be saved for import: load it with mlflow.xgboost.load_model(path) and save "
    "it with " + _SAVE_XGBOOST + ".",
    "onnx": "Its onnx flavour holds an ONNX file: upload the folder's model.onnx itself.",
    "catboost": "Its catboost flavour can be exported for import: load it with mlflow.catboost.load_model(path) and "
    "save it with " + _SAVE_CATBOOST_ONNX + ".",
}
_NOT_SUPPORTED_HOW = {
    "a CatBoost model": "Export it to ONNX where you trained it, with " + _SAVE_CATBOOST_ONNX + ", and upload "
    "model.onnx: ONNX classifiers are imported.",
}


def _is_pickle(data: bytes) -> bool:
    """Whether ``data`` begins like a pickle stream, judged from its opcodes only."""
    if len(data) >= 2 and data[0] == 0x80 and 2 <= data[1] <= 5:
        return True
    if not data or data[0] not in _PROTOCOL_01_STARTS:
        return False
    try:
        for i, (opcode, _arg, _pos) in enumerate(pickletools.genops(io.BytesIO(data[:65536]))):
            if opcode.name == "STOP":
                return True
            if i >= 32:
                return True
    except Exception:  # noqa: BLE001 - any parse failure means "not a pickle"
        return False
    return False


def _compressed_pickle(data: bytes) -> bool:
    """Whether ``data`` is a pickle compressed by one of joblib's stdlib codecs (first bytes only)."""
    head = data[:65536]
    for wbits in (zlib.MAX_WBITS, 16 + zlib.MAX_WBITS):  # zlib stream, gzip member
        try:
            if _is_pickle(zlib.decompressobj(wbits).decompress(head, 64)):
                return True
        except zlib.error:
            pass
    for decompressor in (bz2.BZ2Decompressor, lzma.LZMADecompressor):
        try:
            if _is_pickle(decompressor().decompress(head, 64)):
                return True
        except (OSError, EOFError, lzma.LZMAError, ValueError):
            pass
    return False


def _pickle_kind(data: bytes, suffix: str) -> str | None:
    """``"pickle"``/``"joblib"``/``"compressed pickle (joblib)"`` when the bytes or the name say so, else None."""
    named = "joblib" if suffix == ".joblib" else "pickle"
    if _is_pickle(data):
        return named
    if data[:2] == b"ZF" or data[:4] == b'\x04"M\x18' or _compressed_pickle(data):  # old joblib zfile, LZ4 frame
        return "compressed pickle (joblib)"
    return named if suffix in _PICKLE_NAMES else None


def mlflow_flavours(mlmodel: bytes, *, name: str) -> list[str]:
    """The ``flavors`` keys of an MLflow ``MLmodel`` file, read with the project's safe YAML loader.

    Returns an empty list when the file declares none (or is not a mapping).
    """
    doc = load_yaml(mlmodel, what=f"The MLmodel file in {name!r}")
    flavours = doc.get("flavors") if isinstance(doc, dict) else None
    return [str(k) for k in flavours] if isinstance(flavours, dict) else []


def _refuse_mlflow(mlmodel: bytes, name: str):
    flavours = mlflow_flavours(mlmodel, name=name)
    hows = [_FLAVOUR_HOW[f] for f in flavours if f in _FLAVOUR_HOW]
    if not hows:
        hows = ["None of its flavours can be saved in an accepted format; retrain the model with scikit-learn "
                "or LightGBM and save it with " + _SAVE_SKOPS + " or " + _SAVE_LIGHTGBM + ", or export it to ONNX."]
    listed = "flavour(s): " + ", ".join(flavours) if flavours else "no flavours declared"
    return fail("IMPORT_MLFLOW", name=name, flavours=listed, how=" ".join(hows), accepted=ACCEPTED_FORMATS)


def _mlmodel_in_zip(data: bytes) -> bytes | None:
    """The ``MLmodel`` member of a zip (at any depth), or None; a member over 1 MiB or unreadable is read as empty."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, NotImplementedError):
        return None  # the skops reader reports an unreadable zip
    with zf:
        members = [i for i in zf.infolist() if PurePosixPath(i.filename).name == "MLmodel" and not i.is_dir()]
        if not members:
            return None
        info = min(members, key=lambda i: i.filename.count("/"))
        if info.file_size > _MLMODEL_MAX_BYTES:
            return b""
        try:
            return zf.read(info)
        except Exception:  # noqa: BLE001 - corrupt, encrypted or oddly compressed: still an MLflow folder
            return b""


def _not_supported_kind(data: bytes, suffix: str) -> str | None:
    if suffix == ".cbm" or data[:4] == b"CBM1":
        return "a CatBoost model"
    return None


def refuse_known_format(data: bytes, *, name: str) -> None:
    """Raise a teaching refusal when ``data`` is a recognised but unaccepted model file; else return.

    Parameters
    ----------
    data : bytes
        The uploaded file; it is inspected, never loaded.
    name : str
        File name, for messages and for formats recognised by their extension.

    Raises
    ------
    AuditInputError
        ``IMPORT_PICKLE`` (pickle or joblib), ``IMPORT_MLFLOW`` (a zip holding ``MLmodel``, or that file), or
        ``IMPORT_NOT_SUPPORTED_YET`` (CatBoost, with how to export it to ONNX).
    """
    path = PurePosixPath(name.replace("\\", "/"))
    suffix = path.suffix.lower()
    if data[:2] == b"PK":
        mlmodel = _mlmodel_in_zip(data)
        if mlmodel is not None:
            raise _refuse_mlflow(mlmodel, name)
        return
    if path.name == "MLmodel":
        raise _refuse_mlflow(data, name)
    kind = _pickle_kind(data, suffix)
    if kind is not None:
        raise fail("IMPORT_PICKLE", name=name, kind=kind, accepted=ACCEPTED_FORMATS)
    kind = _not_supported_kind(data, suffix)
    if kind is not None:
        raise fail("IMPORT_NOT_SUPPORTED_YET", name=name, kind=kind, how=_NOT_SUPPORTED_HOW[kind],
                   accepted=ACCEPTED_FORMATS)
