// The extraction fuzz target's even cases (tests/fuzz/extract-target.ts); extract-1 runs the odd ones in another
// jest worker, so the target's 10,000 inputs take half the wall time on two cores.
import { extractionFuzz } from './extract-target';

extractionFuzz(0, 2, 'tests/fuzz/extract-0.fuzz.test.ts');
