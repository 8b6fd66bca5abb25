"""The HTML of an answer turned back into the Markdown the site rendered it from.

Chat sites render the model's Markdown; ``inner_text`` then loses emphasis, code fences and the
soft line breaks of a paragraph. This walks the turn's HTML and writes Markdown again: headings,
paragraphs (keeping their line breaks), emphasis, inline and fenced code (with the language of a
``language-xxx`` class), links, images, lists (nested), quotes, rules and simple tables. Page
furniture inside a turn (buttons such as "copy code", scripts, styles, SVG icons) is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

_SKIPPED = {"script", "style", "button", "svg", "template", "noscript", "textarea", "input", "select"}
_VOID = {"br", "hr", "img", "input", "meta", "link", "source", "wbr", "col", "area", "base", "embed", "track"}
_BLOCKS = {"p", "div", "section", "article", "header", "footer", "main", "aside", "figure", "figcaption",
           "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "blockquote", "hr", "table", "details",
           "summary"}
_INLINE_MARKS = {"strong": "**", "b": "**", "em": "*", "i": "*", "del": "~~", "s": "~~"}


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[_Node | str] = field(default_factory=list)


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("root")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):  # tolerate unclosed tags, as browsers do
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def html_to_markdown(html: str) -> str:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return _tidy(_blocks(builder.root))


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def _blocks(node: _Node) -> str:
    """The children of ``node`` as Markdown, blocks separated by blank lines."""
    parts: list[str] = []
    inline: list[str] = []

    def flush() -> None:
        text = "".join(inline).strip(" \t\n")
        if text:
            parts.append(text)
        inline.clear()

    for child in node.children:
        if isinstance(child, _Node) and child.tag in _BLOCKS:
            flush()
            block = _block(child)
            if block.strip():
                parts.append(block)
        else:
            inline.append(_inline(child))
    flush()
    return "\n\n".join(parts)


def _block(node: _Node) -> str:
    tag = node.tag
    if tag in _SKIPPED:
        return ""
    if re.fullmatch(r"h[1-6]", tag):
        return "#" * int(tag[1]) + " " + _inline_children(node).strip()
    if tag == "pre":
        return _fence(node)
    if tag in ("ul", "ol"):
        return _list(node)
    if tag == "blockquote":
        return "\n".join(f"> {line}" if line else ">" for line in _blocks(node).split("\n"))
    if tag == "hr":
        return "---"
    if tag == "table":
        return _table(node)
    return _blocks(node)


def _inline(child: _Node | str) -> str:
    if isinstance(child, str):
        return re.sub(r"[ \t\r\f]+", " ", child)  # HTML collapses spaces; a newline is a soft break
    tag = child.tag
    if tag in _SKIPPED:
        return ""
    if tag == "br":
        return "\n"
    if tag == "img":
        return f"![{child.attrs.get('alt', '')}]({child.attrs.get('src', '')})"
    if tag == "code":
        return _code_span(_text(child))
    inner = _inline_children(child)
    if tag in _INLINE_MARKS and inner.strip():
        mark = _INLINE_MARKS[tag]
        return f"{mark}{inner.strip()}{mark}"
    if tag == "a" and child.attrs.get("href"):
        return f"[{inner.strip()}]({child.attrs['href']})"
    if tag in _BLOCKS:  # a block inside inline context (say, a div in a span)
        return "\n" + _block(child) + "\n"
    return inner


def _inline_children(node: _Node) -> str:
    return "".join(_inline(c) for c in node.children)


def _text(node: _Node | str) -> str:
    if isinstance(node, str):
        return node
    if node.tag in _SKIPPED:
        return ""
    if node.tag == "br":
        return "\n"
    return "".join(_text(c) for c in node.children)


def _code_span(code: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if code.startswith("`") or code.endswith("`") else ""
    return f"{ticks}{pad}{code}{pad}{ticks}"


def _fence(pre: _Node) -> str:
    code = next((c for c in _descendants(pre) if c.tag == "code"), pre)  # some wrap it in a div
    classes = f"{code.attrs.get('class', '')} {pre.attrs.get('class', '')}"
    language = next(iter(re.findall(r"(?:language|lang)-([\w+#.-]+)", classes)), "")
    body = _text(code).rstrip("\n")
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", body)), default=0) + 1)
    return f"{fence}{language}\n{body}\n{fence}"


def _list(node: _Node) -> str:
    ordered = node.tag == "ol"
    start = int(node.attrs.get("start") or 1) if ordered and (node.attrs.get("start") or "1").isdigit() else 1
    items = [c for c in node.children if isinstance(c, _Node) and c.tag == "li"]
    lines: list[str] = []
    for number, item in enumerate(items, start=start):
        marker = f"{number}. " if ordered else "- "
        text = _blocks(item)
        if not any(isinstance(c, _Node) and c.tag == "p" for c in item.children):
            text = text.replace("\n\n", "\n")  # a tight list: nested blocks follow their item directly
        body = text.split("\n")
        lines.append(marker + body[0])
        lines += [(" " * len(marker) + line) if line else "" for line in body[1:]]
    return "\n".join(lines)


def _table(node: _Node) -> str:
    rows = [r for r in _descendants(node) if r.tag == "tr"]
    cells = [[_inline_children(c).strip().replace("|", "\\|") for c in row.children
              if isinstance(c, _Node) and c.tag in ("td", "th")] for row in rows]
    cells = [row for row in cells if row]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    cells = [row + [""] * (width - len(row)) for row in cells]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return "\n".join(lines)


def _descendants(node: _Node) -> list[_Node]:
    found: list[_Node] = []
    for child in node.children:
        if isinstance(child, _Node):
            found.append(child)
            found += _descendants(child)
    return found
