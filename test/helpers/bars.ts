// For browser tests of the page's live progress (projects and tasks views): signing in, and a
// recorder that keeps every state each task bar (`progress[data-task]`, progress.tsx) and its line
// went through, as the page drew them. It is a MutationObserver in the page, so no state is missed
// between two looks of the test, and it outlives the page's own navigations (not a reload). It
// also records CSP violations, which the console would show too.
import type { Page } from 'puppeteer-core'
import type { Tab } from './browser.ts'

/** Signs in on the sign-in view (the tab must show it) and waits for the shell. */
/** One state of a bar: its task, its accessible name, value and max (value null: indeterminate), its line, and when the page drew it (performance.now()). */
export type BarState = { task: string; label: string; value: number | null; max: number; text: string; at: number }

/** Starts recording bars (again after a reload); what was recorded before is kept until then. */
export async function recordBars(page: Page) {
  // A string: this file is type-checked without the DOM's types; it runs in the page.
  await page.evaluate(`(() => {
    if (window.__recording) return
    window.__recording = true
    window.__bars = []
    window.__csp = []
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber))
    const last = new Map()
    const look = () => {
      for (const bar of document.querySelectorAll('progress[data-task]')) {
        const state = {
          task: bar.dataset.task,
          label: bar.getAttribute('aria-label') ?? '',
          value: bar.hasAttribute('value') ? bar.value : null,
          max: bar.max,
          text: bar.parentElement?.querySelector('.task-progress-text')?.textContent ?? '',
        }
        const key = state.task + ' ' + state.label
        const seen = JSON.stringify(state)
        if (last.get(key) === seen) continue
        last.set(key, seen)
        window.__bars.push({ ...state, at: performance.now() })
      }
    }
    new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true })
    look()
  })()`)
}

/** The states recorded so far, of bars with this accessible name (all when none is given). */
export async function barsSeen(page: Page, label?: string): Promise<BarState[]> {
  const all = (await page.evaluate('window.__bars ?? []')) as BarState[]
  return label === undefined ? all : all.filter((b) => b.label === label)
}

/** CSP violations reported in the page since recordBars(). */
export const cspViolations = (page: Page) => page.evaluate('window.__csp ?? []') as Promise<string[]>

/** A state strictly between empty and full: the bar was seen moving. */
export const isIntermediate = (b: BarState) => b.value !== null && b.value > 0 && b.value < b.max
/** The full bar of a task that is done. */
export const isFull = (b: BarState) => b.value !== null && b.value === b.max && /^done/.test(b.text)
