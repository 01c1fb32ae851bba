"""The platform's environments as Inspect tasks (the `inspect` extra: `platform-sdk[inspect]`).

`inspect eval platform_sdk/episodes -T env=cartpole -T episodes=3 --model <model>` plays one
episode of a platform environment per sample: the model sees each observation as text (and the
frame, for models that take images), answers with a call of the `act` tool, and is scored on the
episode's return, success and steps. Every sample's session is recorded; its id and replay link
are in the sample's metadata, store and scores (docs/evals.md, "The platform's environments as Inspect tasks").

Inspect finds the task through the `inspect_ai` entry point (`registry`); nothing here is
imported by the rest of the SDK.
"""
