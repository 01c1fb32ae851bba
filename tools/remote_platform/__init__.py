"""The parts of tools/gpu_server.py: the platform put on a GPU server over SSH and run there."""
