"""The reward-hacking corpus and the helpers that build stored executions for reward/noise tests."""
