// A view's own stylesheet is imported for its effect (`import './projects.css'`): Bun.build puts
// it into the page's one CSS file, after styles.css. This tells tsc that such an import is fine.
declare module '*.css'
