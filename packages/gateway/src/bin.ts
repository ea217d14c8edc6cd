#!/usr/bin/env node
// Entry point of `npm run gateway` (and what `mnemos gateway` calls).
import { main } from './main.js';

void main();
