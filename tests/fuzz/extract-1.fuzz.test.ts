// The extraction fuzz target's odd cases (tests/fuzz/extract-target.ts); extract-0 runs the even ones.
import { extractionFuzz } from './extract-target';

extractionFuzz(1, 2, 'tests/fuzz/extract-1.fuzz.test.ts');
