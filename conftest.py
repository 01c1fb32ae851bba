pytest_plugins = ["platform_testing.fixtures", "platform_testing.platform"]
