"""Strings read from program and graph files (names, targets, reasons) made safe to print or to write
into generated C / C++ source. Such a string is whatever the file holds: a crafted one must not
move, recolour or hide a terminal's text (control and bidi characters), nor end a line or a comment
of the firmware's sources (a newline followed by `#include "/etc/passwd"`).

- printable(text): for a terminal; every normal name comes back unchanged.
- c_comment(text): for the inside of a C / C++ comment.
- c_string(text): a C string literal.
"""

from __future__ import annotations

import re

__all__ = ["c_comment", "c_string", "printable"]

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(c: str) -> str:
    """c as a Python escape: \\n, \\x1b, \\u202e, \\U0001f600."""
    if c in _SHORT:
        return _SHORT[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text) -> str:
    """str(text) with each character str.isprintable() refuses (control characters, line and
    paragraph separators, format characters such as the bidi overrides, ...) written as repr writes
    it (\\n, \\x1b, \\u202e): one line that shows what the string holds. Backslashes are kept."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def c_comment(text) -> str:
    """str(text) for the inside of a C / C++ comment: in ASCII, with printable's escapes (non-ASCII
    characters too), a backslash as \\x5c (one ending a line would continue a // comment onto the
    next), '*/' as '*\\/' (it would end a /* comment) and no '??' (a trigraph: ??/ is a backslash)."""
    out = "".join(c if " " <= c <= "~" and c != "\\" else _escaped(c) for c in str(text))
    return re.sub(r"\?(?=\?)", "?\\\\", out.replace("*/", "*\\/"))


def c_string(text) -> str:
    """str(text) as a C string literal: printable ASCII as it is but '"', '\\' (escaped) and '?'
    (no trigraphs), every other byte of its UTF-8 as an octal escape."""
    out = []
    for b in str(text).encode("utf-8"):
        c = chr(b)
        if c in "\\\"":
            out.append("\\" + c)
        elif 0x20 <= b < 0x7F and c != "?":
            out.append(c)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'
