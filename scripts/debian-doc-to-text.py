#!/usr/bin/env python3
"""Turn Debian documentation (DocBook HTML pages, or a plain-text .txt.gz) into one UTF-8 text.

Used by scripts/fetch-bench-corpora.sh to build the Russian, German and Korean corpora of
bench-peers' tokbench protocol from Debian packages. Standard library only, deterministic: the
same input files give the same bytes (the fetch script checks their sha256).

    debian-doc-to-text.py OUT INPUT...

Each INPUT is an .html file (its text, the navigation header and footer of DocBook pages left
out, one line per block element, runs of blank lines cut to one, <pre> kept as it is) or a
.txt.gz / .txt file (taken as it is). The inputs are written to OUT in the order given, each
followed by a blank line.
"""

import gzip
import html.parser
import re
import sys

# Elements that start a new line of text.
BLOCK = {
    "address", "blockquote", "br", "dd", "div", "dl", "dt", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "li", "ol", "p", "pre", "table", "td", "th", "title", "tr", "ul",
}
# Elements whose content is no text of the document.
SKIP = {"script", "style", "head"}
# DocBook's navigation blocks (Prev/Next/Home links), repeated on every page.
NAV_CLASSES = {"navheader", "navfooter"}


class Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []
        self.skip = 0  # depth inside SKIP elements
        self.pre = 0  # depth inside <pre>
        # Open <div>s: True for a navigation block (its content is left out).
        self.divs = []

    def in_nav(self):
        return any(self.divs)

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        if tag == "div":
            classes = set((dict(attrs).get("class") or "").split())
            self.divs.append(bool(classes & NAV_CLASSES))
        if tag == "pre":
            self.pre += 1
        if tag in BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in SKIP and self.skip:
            self.skip -= 1
        if tag == "div" and self.divs:
            self.divs.pop()
        if tag == "pre" and self.pre:
            self.pre -= 1
        if tag in BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if self.skip or self.in_nav():
            return
        if self.pre:
            self.parts.append(data)
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_text(raw):
    parser = Text()
    parser.feed(raw)
    parser.close()
    lines = [line.rstrip() for line in "".join(parser.parts).split("\n")]
    text = "\n".join(line if line.strip() else "" for line in lines)
    # Lines outside <pre> lose the space left of them by a tag before them.
    text = re.sub(r"\n +(?=\S)", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out, inputs = argv[1], argv[2:]
    texts = []
    for path in inputs:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                texts.append(f.read().decode("utf-8"))
        elif path.endswith(".html"):
            with open(path, encoding="utf-8") as f:
                texts.append(html_text(f.read()))
        else:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(t.rstrip("\n") + "\n" for t in texts))


if __name__ == "__main__":
    main(sys.argv)
