"""A text file's encoding, decided from its bytes, and what a non-UTF-8 decision did to its characters.

Order: a byte-order mark wins (UTF-8, UTF-16); then UTF-16 without a mark
(zero bytes at every other position); then strict UTF-8. Otherwise the file
is in a legacy code page, and the words that hold non-ASCII bytes decide
which (:func:`choose_code_page`): Western European (cp1252, a superset of the
printable Latin-1) unless the evidence singles out another.

Every decision other than UTF-8 that the reader takes itself becomes a
warning (``READ_ENCODING``) that lists the non-ASCII characters it produced,
with counts and an example word each, so that a wrong guess ("Z³rich") is
seen where the table is read. The whole file is never decoded into one
string: it is decoded in chunks, to check that it decodes and to count its
characters, and the parser reads the bytes itself.
"""
from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterator

from audit_core.errors import excerpt, fail, register_messages

from .options import MB
from .report import note
from .sniff import utf16_without_bom

__all__ = ["TextEncoding", "choose_code_page", "decide_encoding", "iter_text"]

register_messages(
    {
        "READ_ENCODING": (
            "{name!r} is not UTF-8: it was read as {encoding} ({how}). Characters outside ASCII it decoded: "
            "{chars}. If one looks wrong (for example 'Z³rich' where the file means 'Zürich'), choose the "
            "file's encoding (Read options on the page, data.encoding in a CLI config)."
        ),
    }
)

#: Bytes decoded at a time when a whole file is checked or counted.
_CHUNK = 8 * MB
#: Bytes of decoded text kept for sniffing the delimiter and the header.
SAMPLE_BYTES = 4 * MB
#: Bytes of lines holding non-ASCII bytes read to choose a code page.
_EVIDENCE_BYTES = 1 * MB
#: Characters listed in the warning, and the example words kept per character.
_SHOWN = 10

#: Legacy code pages always considered besides the Western one and charset_normalizer's proposals.
_CODE_PAGES = ("cp1250", "cp1251", "cp1253", "cp1254", "cp1257")
_DESCRIBED = {
    "cp1252": "Windows-1252, Western European", "latin-1": "Latin-1, Western European",
    "cp1250": "Windows-1250, Central European", "cp1251": "Windows-1251, Cyrillic",
    "cp1253": "Windows-1253, Greek", "cp1254": "Windows-1254, Turkish", "cp1257": "Windows-1257, Baltic",
}

#: The non-ASCII lowercase letters of languages written in Latin script: a reading whose accented
#: letters one alphabet holds is plausible text in that language.
_ALPHABETS = {
    "German": "äöüß", "French": "àâæçéèêëîïôœùûüÿ", "Spanish": "áéíñóúü", "Portuguese": "áâãàçéêíóôõú",
    "Italian": "àèéìíîòóùú", "Catalan": "àçéèíïóòúü", "Dutch": "áéèëïóöüíú", "Danish/Norwegian": "æøåé",
    "Swedish": "åäöé", "Finnish": "äöåšž", "Icelandic": "áðéíóúýþæö", "Faroese": "áðíóúýæø",
    "Estonian": "äöõüšž", "Irish": "áéíóú", "Turkish": "çğıöşü", "Polish": "ąćęłńóśźż",
    "Czech": "áčďéěíňóřšťúůýž", "Slovak": "áäčďéíĺľňóôŕšťúýž", "Hungarian": "áéíóöőúüű",
    "Romanian": "ăâîșțşţ", "Slovene": "čšž", "Croatian": "čćđšž", "Latvian": "āčēģīķļņšūž",
    "Lithuanian": "ąčęėįšųūž", "Albanian": "çë",
}
#: Scripts written together (Japanese mixes kanji and kana): one "script" for the mixing test.
_SCRIPT_GROUPS = {"CJK": "CJK", "HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK", "FULLWIDTH": "CJK",
                  "HALFWIDTH": "CJK", "IDEOGRAPHIC": "CJK"}
#: Not letters here, although Unicode files them as such.
_NOT_LETTERS = frozenset("ªºµ")
#: Punctuation that may stand between two letters of one word (l·l, l’homme, Baden–Baden).
_INNER_PUNCTUATION = frozenset("·’‘´‐‑–—")
# Runs of ASCII letters and non-ASCII characters other than blanks: the "words" a reading is judged on.
_WORD = re.compile(r"[^\x00-\x40\x5b-\x60\x7b-\x7f\s]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@dataclass(frozen=True)
class TextEncoding:
    """How a text file is decoded.

    Attributes
    ----------
    codec : str
        The Python codec name (also given to the parser).
    note : str
        How it was chosen, in words (the read report's encoding line).
    sample : str
        The start of the file decoded (up to :data:`SAMPLE_BYTES`), for sniffing.
    warning : tuple of (code, message) or None
        ``READ_ENCODING`` for a decision other than UTF-8 that changed non-ASCII characters.
    """

    codec: str
    note: str
    sample: str
    warning: tuple[str, str] | None = None


def iter_text(data: bytes, codec: str, *, chunk: int = _CHUNK) -> Iterator[str]:
    """Decode ``data`` strictly, ``chunk`` bytes at a time.

    Raises
    ------
    UnicodeDecodeError
        With ``start``/``end`` counted from the start of ``data``.
    """
    decoder = codecs.getincrementaldecoder(codec)(errors="strict")
    view = memoryview(data)
    for offset in range(0, max(len(data), 1), chunk):
        piece = view[offset: offset + chunk]
        try:
            yield decoder.decode(piece, final=offset + chunk >= len(data))
        except UnicodeDecodeError as exc:
            raise UnicodeDecodeError(exc.encoding, bytes(data[offset: offset + chunk]), exc.start, exc.end,
                                     f"{exc.reason} at byte {offset + exc.start:,}") from None


def _decodes(data: bytes, codec: str) -> bool:
    try:
        for _ in iter_text(data, codec):
            pass
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def _sample(data: bytes, codec: str) -> str:
    """The first :data:`SAMPLE_BYTES` decoded, a character cut at the end left out."""
    return codecs.getincrementaldecoder(codec)(errors="replace").decode(data[:SAMPLE_BYTES], final=False)


def _detail(exc: UnicodeDecodeError) -> str:
    bad = exc.object[exc.start: exc.start + 1]
    return f"byte 0x{bad.hex()} {exc.reason}" if bad else exc.reason


def _letter(ch: str) -> bool:
    return ch.isalpha() and ch not in _NOT_LETTERS


def _script(ch: str) -> str:
    if ch < "\x80":
        return "LATIN"
    first = unicodedata.name(ch, "?").split(" ", 1)[0]
    return _SCRIPT_GROUPS.get(first, first)


def _implausible(word: str) -> bool:
    """A reading no language writes: a sign inside a word (Z³rich), a capital inside a lowercase word
    (ZŘrich), two alphabets in one word (Zьrich), or three accented Latin letters in a row (how Cyrillic
    or Greek look in a Western code page: Ìîñêâà)."""
    letters = [_letter(c) for c in word]
    run = 0
    for i, c in enumerate(word):
        if c < "\x80":
            run = 0
            continue
        before = i > 0 and letters[i - 1]
        after = i + 1 < len(word) and letters[i + 1]
        if not letters[i]:
            run = 0
            if before and after and c not in _INNER_PUNCTUATION:
                return True
            continue
        if c.isupper() and before and (word[i - 1].islower() or (after and word[i + 1].islower())):
            return True
        run = run + 1 if _script(c) == "LATIN" else 0
        if run >= 3:
            return True
    scripts = {_script(c) for c, is_letter in zip(word, letters, strict=True) if is_letter}
    return len(scripts - {"CJK"}) > 1


def _languages(words: list[str]) -> int:
    """How many languages (alphabets, or scripts other than Latin) the accented letters of ``words`` need."""
    latin: set[str] = set()
    scripts: set[str] = set()
    for word in words:
        for c in word:
            if c >= "\x80" and _letter(c):
                if _script(c) == "LATIN":
                    low = c.lower()[:1]
                    if low >= "\x80":
                        latin.add(low)
                else:
                    scripts.add(_script(c))
    needed = len(scripts)
    while latin:  # greedy cover: exact enough for a handful of letters
        best = max(_ALPHABETS.values(), key=lambda a: len(latin & set(a)))
        covered = latin & set(best)
        if not covered:
            return needed + len(latin)  # a letter no listed alphabet holds counts as a language of its own
        latin -= covered
        needed += 1
    return needed


@dataclass(frozen=True)
class _Reading:
    codec: str
    text: str
    implausible: int  # distinct words no language writes
    languages: int  # alphabets the other words' accented letters need

    @property
    def single(self) -> bool:
        """Plausible text in one language (or one non-Latin script)."""
        return self.implausible == 0 and self.languages <= 1


def _reading(evidence: bytes, codec: str) -> _Reading | None:
    try:
        text = codecs.getincrementaldecoder(codec)(errors="strict").decode(evidence, final=False)
    except (UnicodeDecodeError, LookupError):
        return None
    words = [w for w in set(_WORD.findall(text)) if not w.isascii()]
    vetoed = {w for w in words if _implausible(w)}
    return _Reading(codec=codec, text=text, implausible=len(vetoed),
                    languages=_languages([w for w in words if w not in vetoed]))


def _one_byte(codec: str) -> bool:
    """A code page of one byte a character (cp1252, cp1251, ...), not a multi-byte one (cp932, big5, ...)."""
    return len(bytes(range(128, 256)).decode(codec, errors="replace")) == 128


def _evidence(data: bytes) -> bytes:
    """Lines holding non-ASCII bytes, from the start of the file, up to :data:`_EVIDENCE_BYTES`."""
    kept, size = [], 0
    for line in data[:SAMPLE_BYTES].split(b"\n"):
        if not line.isascii():
            kept.append(line)
            size += len(line) + 1
            if size >= _EVIDENCE_BYTES:
                break
    return b"\n".join(kept)


def choose_code_page(data: bytes) -> list[str]:
    """Legacy code pages for bytes that are not UTF-8, the most plausible first.

    Candidates are cp1252 (Western European), the code pages
    ``charset_normalizer`` proposes and the common Windows code pages. Each
    reads the words that hold non-ASCII bytes; a reading is *implausible*
    when some word is one no language writes (:func:`_implausible`), and a
    plausible reading is *single* when its accented letters fit one
    language's alphabet (or one non-Latin script). cp1252 comes first when
    its reading is single; otherwise a single reading of another code page
    comes first (the evidence singles it out: Polish, Czech, Turkish,
    Cyrillic, Greek), then cp1252 if it is still plausible (a mixed-language
    Western file), then the other plausible readings by how many languages
    they need. Latin-1, which decodes any bytes, is last.

    Examples
    --------
    >>> choose_code_page("id,city\\n1,Zürich\\n2,Bern\\n".encode("latin-1"))[0]
    'cp1252'
    >>> choose_code_page("id,city\\n1,Łódź\\n2,Wrocław\\n".encode("cp1250"))[0]
    'cp1250'
    >>> choose_code_page("id,city\\n1,Москва\\n2,Казань\\n".encode("cp1251"))[0]
    'cp1251'
    """
    from charset_normalizer import from_bytes

    evidence = _evidence(data)
    matches = list(from_bytes(evidence))
    proposed = [m.encoding for m in matches]
    coherence = {codec: 0.0 for codec in ("cp1252", *_CODE_PAGES)} | {m.encoding: m.coherence for m in matches}
    readings: list[_Reading] = []
    for codec in dict.fromkeys(["cp1252", *proposed, *_CODE_PAGES]):
        r = _reading(evidence, codec)
        if r is not None and all(r.text != other.text for other in readings):
            readings.append(r)
    western = readings[0] if readings and readings[0].codec == "cp1252" else None
    if western is not None and western.single:
        ranked = readings
    else:
        # Few bytes can read as a handful of CJK characters as well as in a code page of one byte a
        # letter: the one-byte reading comes first, and a real CJK text rules it out (mixed scripts, signs).
        # Between CJK readings (kanji read as rare hangul), charset_normalizer's character frequencies decide.
        singles = sorted((r for r in readings if r.single),
                         key=lambda r: (not _one_byte(r.codec), 0.0 if _one_byte(r.codec) else -coherence[r.codec]))
        plausible = sorted((r for r in readings if r.implausible == 0 and not r.single),
                           key=lambda r: (r is not western, r.languages))
        rest = sorted((r for r in readings if r.implausible > 0),
                      key=lambda r: (r.implausible, r.languages, r is not western))
        ranked = [*singles, *plausible, *rest]
    return [r.codec for r in ranked] + ["latin-1"]


def _affected(data: bytes, codec: str) -> str:
    """The non-ASCII characters ``data`` decodes to, most frequent first, with counts and an example word."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for piece in iter_text(data, codec, chunk=MB):
        found = _NON_ASCII.findall(piece)
        if not found:
            continue
        counts.update(found)
        for ch in set(found) - examples.keys():
            at = piece.index(ch)
            word = next((m.group() for m in _WORD.finditer(piece, max(at - 40, 0), at + 40)
                         if m.start() <= at < m.end()), ch)
            examples[ch] = word
    shown = [f"{excerpt(ch)} {n:,}× (e.g. {excerpt(examples[ch])})" for ch, n in counts.most_common(_SHOWN)]
    more = len(counts) - _SHOWN
    return ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")


def _warning(data: bytes, codec: str, name: str, how: str) -> tuple[str, str] | None:
    chars = _affected(data, codec)
    if not chars:
        return None
    described = _DESCRIBED.get(codec)
    encoding = f"{codec} ({described})" if described else codec
    return note("READ_ENCODING", name=name, encoding=encoding, how=how, chars=chars)


def decide_encoding(data: bytes, name: str, encoding: str | None) -> TextEncoding:
    """Decide how to decode text bytes and check that the whole file decodes that way.

    Parameters
    ----------
    data : bytes
    name : str
        For messages.
    encoding : str or None
        The user's choice; ``None`` decides from the bytes.

    Returns
    -------
    TextEncoding

    Raises
    ------
    AuditInputError
        ``BAD_ENCODING`` when the chosen encoding, or the one a byte-order
        mark declares, does not decode the file.

    Examples
    --------
    >>> enc = decide_encoding("a,city\\n1,Zürich\\n".encode("latin-1"), "t.csv", None)
    >>> enc.codec, enc.sample.splitlines()[1]
    ('cp1252', '1,Zürich')
    >>> enc.warning[1].split(":", 2)[2][:43]
    " 'ü' 1× (e.g. 'Zürich'). If one looks wrong"
    """
    if encoding is not None:
        try:
            for _ in iter_text(data, encoding):
                pass
        except (UnicodeDecodeError, LookupError) as exc:
            detail = _detail(exc) if isinstance(exc, UnicodeDecodeError) else str(exc)
            raise fail("BAD_ENCODING", name=name, encoding=encoding, detail=detail[:200]) from None
        return TextEncoding(encoding, f"Encoding {encoding}, as chosen in Read options.", _sample(data, encoding))
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            try:
                for _ in iter_text(data, codec):
                    pass
            except UnicodeDecodeError as exc:
                raise fail("BAD_ENCODING", name=name, encoding=codec, detail=_detail(exc)[:200]) from None
            warning = None if codec == "utf-8-sig" else _warning(data, codec, name, "from its byte-order mark")
            return TextEncoding(codec, f"Encoding {codec} (from its byte-order mark).", _sample(data, codec), warning)
    utf16 = utf16_without_bom(data)
    if utf16 is not None:
        return TextEncoding(
            utf16,
            f"Encoding {utf16.upper()} without a byte-order mark (detected from the zero bytes at every other position).",
            _sample(data, utf16),
            _warning(data, utf16, name, "UTF-16 without a byte-order mark, from the zero bytes at every other position"),
        )
    if _decodes(data, "utf-8"):
        return TextEncoding("utf-8", "Encoding utf-8.", _sample(data, "utf-8"))
    codec = next(c for c in choose_code_page(data) if _decodes(data, c))
    how = "a guess from the words that hold non-ASCII bytes"
    return TextEncoding(
        codec,
        f"Encoding {codec} (not valid UTF-8; a guess — choose another in Read options if letters look wrong).",
        _sample(data, codec),
        _warning(data, codec, name, how),
    )
