// Files embedded with `import x from '...' with { type: 'file' }` resolve to their path.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module '*.css' {
  const path: string
  export default path
}
