"""The adversarial corpus of the reward and the noise filter, for any function task: wrong programs
that must earn no passing reward (the public hack families, memorisers, inexact numbers, hidden exits,
hostile values) and correct programs that must keep their full reward (the reference wrapped in benign
standard-library use, renamed, cached; hand-written unusual solutions). ``run.py`` evaluates it end to
end through the sandbox; ``python -m bench.reward`` and the acceptance tests report on it."""
