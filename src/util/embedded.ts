// Where the compiled executable keeps its own modules. Bun serves them from an embedded file
// system whose URLs lie under /$bunfs/root/ on Linux and macOS and under B:/~BUN/root/ on
// Windows, where import.meta.url spells the tilde %7EBUN (seen under Wine): a test for one
// spelling alone sends the others to a source file that is not there.

/** Whether a module's URL (import.meta.url) is one of the executable's embedded files. */
export const isEmbedded = (url: string) => /\/(\$bunfs|~BUN|%7EBUN)\//i.test(url)
