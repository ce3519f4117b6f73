// DOM helpers of the popup and the side panel: find an element, make one, make a button, say a
// line in a status element. Invariant: text is set only through textContent (never parsed as
// HTML), so text from a model, a page or a server stays text; nothing remote is loaded; no
// decisions here.

/** The element of this page with that id. */
export const $ = (id) => document.getElementById(id);

/** A new element, with a class and a text (set as textContent) when given. */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/**
 * A new element whose text shows `code spans` (between backticks, as the host writes names,
 * flags and keys in its messages) as <code>: text nodes only, never markup. Unbalanced
 * backticks are shown as they are.
 */
export function withCode(tag, className, text) {
  const node = element(tag, className);
  node.append(...codeSpans(text));
  return node;
}

/** The nodes of `text` with its `code spans` as <code> (text nodes only). */
function codeSpans(text) {
  const parts = String(text ?? '').split('`');
  if (parts.length % 2 === 0) return [document.createTextNode(String(text ?? ''))];
  return parts.flatMap((part, i) => (!part ? [] : i % 2 === 1 ? [element('code', '', part)] : [document.createTextNode(part)]));
}

/** Offers `text` to the person as a file `name` of MIME type `type` (the browser's download). */
export function download(text, name, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = element('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A new `type=button` button with its text and its click handler. */
export function button(text, onClick, className) {
  const node = element('button', className, text);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/** Says a line in the status element `id` (as text, its `code spans` as code), marked as an
 * error or not. */
export function say(id, text, isError = false) {
  const node = $(id);
  node.replaceChildren(...codeSpans(text));
  node.classList.toggle('error', isError);
}

/** The text of an error (its message), or of anything thrown. */
export const errorText = (error) => String(error?.message ?? error);
