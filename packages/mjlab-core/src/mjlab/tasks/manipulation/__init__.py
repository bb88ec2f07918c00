"""Manipulation tasks: lift a cube with the Franka Panda from state, RGB or depth observations."""
