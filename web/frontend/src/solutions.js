// The problem page's solutions part (issue 20). Started by main.js after initProblem; it hears
// "judge:done" (detail: the finished submission) on document.
export function initSolutions(_data) {}
