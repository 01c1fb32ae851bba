"""`python -m platform_sdk.menagerie`, as the overview spells it: fetches the Menagerie robots
ahead of time. The robots live in `platform_envs.robots.menagerie` (the environments' package, with
the SDK's `robots` environments); this name only runs that command."""
