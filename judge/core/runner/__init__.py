"""The code that runs inside the sandbox: it loads solutions and runs cases, nothing more."""
