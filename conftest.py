pytest_plugins = ["platform_testing.fixtures"]
