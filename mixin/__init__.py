"""simd's monitoring mixin: the Prometheus rules and the Grafana dashboard, generated from code.

Like kubernetes-mixin, one configuration (:mod:`mixin.config`: the job selector, the runbook base URL,
the names of the recording rules) drives every generated asset, so a selector or a URL is written once.
``python -m mixin`` writes the generated files into ``prometheus/rules/`` and ``grafana/dashboards/``;
the tests check that the committed files equal what the code generates.
"""
