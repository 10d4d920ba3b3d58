// The problem page's course part (issue 20). Started by main.js after initProblem; it hears
// "judge:done" (detail: the finished submission) on document.
export function initCourse(_data) {}
