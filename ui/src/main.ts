document.getElementById("app")!.textContent = "Arbor";
