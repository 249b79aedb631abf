#!/usr/bin/env node
// Runs the compiled CLI (npm run build creates dist/).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
