#!/usr/bin/env node
/** The `sluice` executable (package.json "bin"): parses the command line, reports a failure in one line. */
import { reportFailure } from './failure.js';
import { createProgram } from './program.js';

createProgram()
  .parseAsync()
  .catch((error: unknown) => {
    reportFailure(error);
    process.exitCode = 1;
  });
