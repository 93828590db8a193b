// Reading the form bodies of console pages (application/x-www-form-urlencoded or multipart): one
// parse per request, kept on the context, and one way to read a text field or a list.
import type { Context } from "hono";

type Body = Record<string, string | File | (string | File)[]>;

const parsed = new WeakMap<Request, Promise<Body>>();

function bodyOf(c: Context): Promise<Body> {
  let body = parsed.get(c.req.raw);
  if (!body) {
    body = c.req.parseBody({ all: true }).catch(() => ({}) as Body);
    parsed.set(c.req.raw, body);
  }
  return body;
}

/** A text field (the first when repeated); "" when absent or a file. */
export async function formText(c: Context, name: string): Promise<string> {
  const value = (await bodyOf(c))[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : "";
}

/** Every text value of a repeated field (checkboxes). */
export async function formList(c: Context, name: string): Promise<string[]> {
  const value = (await bodyOf(c))[name];
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all.filter((v): v is string => typeof v === "string");
}
