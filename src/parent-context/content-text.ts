type ContentPart = { type: string; text?: string };

/**
 * The text of a Pi message's content: a string as it is, or the text parts of a content array,
 * joined by `separator`. With `images`, an image part reads as "[image]" so readers know one was
 * there. Tool calls, thinking and other parts carry no text here.
 */
export function contentText(content: unknown, options: { separator?: string; images?: boolean } = {}): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as ContentPart[])
    .map((part) => (part.type === "text" ? (part.text ?? "") : options.images && part.type === "image" ? "[image]" : ""))
    .filter((text) => text.length > 0)
    .join(options.separator ?? "");
}
