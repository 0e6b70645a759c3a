// Files embedded with `import x from '...' with { type: 'file' }` resolve to their path.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module '*.css' {
  const path: string
  export default path
}
// The web page's files, embedded by build.ts (src/http/pagebuild.ts writePage); not there when run from source.
declare module 'reelhouse:page' {
  const files: import('./http/pagebuild.ts').EmbeddedFile[]
  export default files
}
// xxhash-wasm's WebAssembly, loaded by storage/hash.ts.
declare module '*.wasm' {
  const path: string
  export default path
}
