// Markdown to DOM without raw HTML. Session content is untrusted (fault F47): every piece of it
// becomes a text node: nothing is ever parsed as HTML, no attribute is taken from content, and
// links are shown as text.

type Doc = Document;

function inline(doc: Doc, parent: HTMLElement, text: string): void {
  // Tokens: `code`, **bold**, *em*, [label](url). Anything else is plain text.
  const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\([^)\s]+\))/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    const at = m.index ?? 0;
    if (at > last) parent.appendChild(doc.createTextNode(text.slice(last, at)));
    const tok = m[0];
    if (m[1]) {
      const c = doc.createElement("code");
      c.textContent = tok.slice(1, -1);
      parent.appendChild(c);
    } else if (m[2]) {
      const b = doc.createElement("strong");
      b.textContent = tok.slice(2, -2);
      parent.appendChild(b);
    } else if (m[3]) {
      const i = doc.createElement("em");
      i.textContent = tok.slice(1, -1);
      parent.appendChild(i);
    } else {
      const close = tok.indexOf("](");
      const span = doc.createElement("span");
      span.className = "md-link";
      span.textContent = tok.slice(1, close);
      const target = tok.slice(close + 2, -1);
      // Only web links keep their target (as a tooltip); a javascript: or data: target is dropped.
      if (/^https?:\/\//i.test(target)) span.title = target;
      parent.appendChild(span);
    }
    last = at + tok.length;
  }
  if (last < text.length) parent.appendChild(doc.createTextNode(text.slice(last)));
}

/** Render markdown source into a fresh element. */
export function renderMarkdown(src: string, doc: Doc = document): HTMLElement {
  const root = doc.createElement("div");
  root.className = "md";
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let list: HTMLElement | null = null;
  let para: string[] = [];
  const flushPara = () => {
    if (para.length) {
      const p = doc.createElement("p");
      inline(doc, p, para.join(" "));
      root.appendChild(p);
      para = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^\s*(```|~~~)(.*)$/.exec(line);
    if (fence) {
      flushPara();
      list = null;
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      const pre = doc.createElement("pre");
      const code = doc.createElement("code");
      const lang = fence[2].trim();
      if (/^[\w+-]{1,20}$/.test(lang)) code.dataset.lang = lang;
      code.textContent = body.join("\n");
      pre.appendChild(code);
      root.appendChild(pre);
      continue;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    const li = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (h) {
      flushPara();
      list = null;
      const el = doc.createElement(`h${Math.min(h[1].length + 2, 6)}`);
      inline(doc, el, h[2]);
      root.appendChild(el);
    } else if (li) {
      flushPara();
      if (!list) {
        list = doc.createElement("ul");
        root.appendChild(list);
      }
      const item = doc.createElement("li");
      inline(doc, item, li[1]);
      list.appendChild(item);
    } else if (line.trim() === "") {
      flushPara();
      list = null;
    } else {
      list = null;
      para.push(line);
    }
    i++;
  }
  flushPara();
  return root;
}
