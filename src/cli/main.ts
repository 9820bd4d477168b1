#!/usr/bin/env node
import { CommanderError } from 'commander'
import { buildProgram } from './program.js'

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    // commander has already printed its own message
    if (err instanceof CommanderError) process.exit(err.exitCode)
    process.stderr.write(`goalpost: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
