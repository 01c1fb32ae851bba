"""Adapters that bring simulator families (Atari, DeepMind Control, MuJoCo) into the catalog as Gymnasium environments."""
