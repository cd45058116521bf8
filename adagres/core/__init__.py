"""The numpy-only core: settings, the prepared pool, the greedy selection and its record,
adaptive λ, baselines, metrics, the guarantee and the sweeps (imports nothing above it)."""
