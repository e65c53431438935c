// Keeps rulejit_testsupport non-empty before other support files exist.
