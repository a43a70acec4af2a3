/**
 * The manifest's entry. It sits at the package root so Pi lists the extension under the package's
 * own name ("pi-flow" when installed from npm, the checkout's folder when loaded from a path)
 * rather than under the folder of its source ("src").
 */
export { default } from "./src/index.ts";
