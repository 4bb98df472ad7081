"""The table's devices: buttons, lights and the capture loop, through gpiozero."""
