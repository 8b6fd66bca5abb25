"""Which encoding a text task file is in: UTF-8, UTF-16 with BOM, or a legacy CJK code page.

Excel and Notepad on an East-Asian Windows save CSV in the system code page. Almost any byte
string decodes as GB18030, so "decodes without error" proves nothing: each legacy candidate must
also *look like* its language -- kana for Shift-JIS, Hangul for EUC-KR, common simplified
characters (GB2312) for GB18030, CJK for Big5. A file that fits none, or fits two, is refused with
a message naming ``--encoding``, never read as mojibake.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from mediaassist.core.errors import ImportFileError
from mediaassist.core.messages import Message, either, msg, verbatim

# Shares of the non-ASCII characters that make a legacy decoding believable.
_KANA_SHARE = 0.2  # Japanese prose is a third or more kana; other texts decoded as cp932 ~none
_HANGUL_SHARE = 0.8  # Korean is nearly all Hangul; Chinese read as cp949 is about half
_GB2312_SHARE = 0.9  # simplified Chinese is >99% GB2312; Big5 or Korean read as GBK is far less
_CJK_SHARE = 0.9
_HANGUL_SURE_SHARE, _HANGUL_SURE_COUNT = 0.95, 20

LEGACY_NAMES = {"gb18030": "GB18030", "cp932": "Shift-JIS", "cp949": "EUC-KR", "cp950": "Big5"}


@dataclass(frozen=True)
class DecodedText:
    text: str
    encoding: str
    note: Message | None = None  # a line for the import report when the encoding was guessed


def decode_task_text(data: bytes, where: str, encoding: str | None = None) -> DecodedText:
    """``data`` as text, in ``encoding`` when the operator named one (``--encoding``)."""
    if encoding is not None:
        return _decode_as(data, where, encoding)
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # Excel's "Unicode Text"
        return DecodedText(_strict(data, "utf-16", where), "utf-16")
    try:
        return DecodedText(data.decode("utf-8-sig"), "utf-8")
    except UnicodeDecodeError as exc:
        if data.startswith(codecs.BOM_UTF8):
            raise ImportFileError(
                msg("{path}: starts with a UTF-8 byte-order mark but is not UTF-8 (invalid byte at offset {offset} "
                    "after the mark); save it as UTF-8 again, or name its encoding with --encoding",
                    path=where, offset=exc.start)) from None
    return _guess_legacy(data, where)


def _decode_as(data: bytes, where: str, encoding: str) -> DecodedText:
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise ImportFileError(msg("{path}: unknown encoding {encoding} (e.g. utf-8, gb18030, shift_jis, big5, "
                                  "euc_kr)",
                                  path=where, encoding=repr(encoding))) from None
    if name.startswith("utf-8"):
        name = "utf-8-sig"
    elif data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]  # a stray mark before bytes in the named encoding
    return DecodedText(_strict(data, name, where), name)


def _strict(data: bytes, encoding: str, where: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        shown = encoding.removesuffix("-sig")
        raise ImportFileError(msg("{path}: not valid {encoding} (byte offset {offset}: {reason}); check "
                                  "--encoding, or save the file as UTF-8",
                                  path=where, encoding=shown, offset=exc.start, reason=exc.reason)) from None


def _guess_legacy(data: bytes, where: str) -> DecodedText:
    fits = _fitting_encodings(data)
    if len(fits) == 1:
        encoding = fits[0]
        note = None if encoding == "gb18030" else (
            msg("read as {encoding} (detected); name another with --encoding if that is wrong",
                encoding=LEGACY_NAMES[encoding]))
        return DecodedText(data.decode(encoding), encoding, note)
    if fits:
        names = either([verbatim(LEGACY_NAMES[e]) for e in fits])
        raise ImportFileError(msg("{path}: not UTF-8, and could be {encodings}; name the encoding with --encoding "
                                  "(e.g. --encoding gb18030), or save the file as UTF-8",
                                  path=where, encodings=names))
    raise ImportFileError(msg("{path}: not readable as text (not UTF-8, and not clearly GB18030, Shift-JIS, Big5 "
                              "or EUC-KR); save it as UTF-8, or name its encoding with --encoding",
                              path=where))


def _fitting_encodings(data: bytes) -> list[str]:
    """The legacy encodings ``data`` is believable in, after the tie-breaks below."""
    shares = {encoding: _fit(data, encoding) for encoding in LEGACY_NAMES}
    fits = [encoding for encoding, (share, _) in shares.items() if share >= _THRESHOLDS[encoding]]
    if "gb18030" in fits and "cp950" in fits:
        fits.remove("cp950")  # GB text decodes as Big5 too; Big5 text is never mostly GB2312
    if "gb18030" in fits and "cp949" in fits:
        # EUC-KR Hangul bytes are valid GB2312 hanzi. Only about half of Chinese characters share
        # their lead bytes, so 20 characters that all do are Korean, not chance.
        share, count = shares["cp949"]
        fits.remove("gb18030" if share >= _HANGUL_SURE_SHARE and count >= _HANGUL_SURE_COUNT else "cp949")
        if share < _HANGUL_SURE_SHARE or count < _HANGUL_SURE_COUNT:
            fits.append("cp949")  # too little text to tell: ambiguous, the operator decides
    return fits


def _fit(data: bytes, encoding: str) -> tuple[float, int]:
    """(share of non-ASCII characters typical of the language, how many there are)."""
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return 0.0, 0
    wide = [c for c in text if ord(c) > 0x7F and not c.isspace()]
    if not wide or "\0" in text:
        return 0.0, 0
    test = _TESTS[encoding]
    return sum(1 for c in wide if test(c)) / len(wide), len(wide)


def _is_kana(c: str) -> bool:
    return "\u3040" <= c <= "\u30ff"


def _is_common_hangul(c: str) -> bool:
    """A syllable of KS X 1001 (EUC-KR proper). Text in another code page read as cp949 lands in
    its extension block instead (Shift-JIS kana and kanji do)."""
    if not "\uac00" <= c <= "\ud7a3":
        return False
    lead, trail = c.encode("cp949")  # every syllable is two bytes in cp949
    return lead >= 0xB0 and trail >= 0xA1


def _is_cjk(c: str) -> bool:
    """Ideographs, CJK punctuation and full-width forms: what Chinese text is made of."""
    return ("\u4e00" <= c <= "\u9fff" or "\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef"
            or "\u3400" <= c <= "\u4dbf" or c in "\u2014\u2018\u2019\u201c\u201d\u2026\u00b7")


def _in_gb2312(c: str) -> bool:
    # GB2312 has kana, but Chinese prose does not use them
    return not _is_kana(c) and _encodes(c, "gb2312")


def _encodes(c: str, encoding: str) -> bool:
    try:
        c.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


_TESTS = {"gb18030": _in_gb2312, "cp932": _is_kana, "cp949": _is_common_hangul, "cp950": _is_cjk}
_THRESHOLDS = {"gb18030": _GB2312_SHARE, "cp932": _KANA_SHARE, "cp949": _HANGUL_SHARE, "cp950": _CJK_SHARE}
