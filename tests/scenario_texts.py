"""Scenario-file texts shared by the tests of the reader, the CLI and the fuzzers."""

# the smallest valid file: one scenario with every required key
SMALL = """scenarios:
  - name: small
    n_gpus: 512
    step_seconds: 30
    target_steps: 400
    failures: {hard_per_gpu_hour: 5.0e-4, sdc_per_gpu_hour: 5.0e-4}
    checkpoint: {interval_steps: 20, seconds: 60}
    validation: {interval_steps: 10, seconds: 5}
"""
