global using System.Linq;
global using Acme.Pricing;
